/* cake_run_main.c — stand-alone `cake run` for device calls made before
 * src/main.c wires the subcommand: `cake-run ARGS` == `cake run ARGS`. */
#include "gpu/gpu.h"

int main(int argc, char **argv)
{
	return run_main(argc, argv);
}
