/* cake_run_main.c — stand-alone `cake run` for device calls made before
 * src/main.c wires the subcommand: `cake-run ARGS` == `cake run ARGS`. */
#include "gpu/gpu.h"

#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run"))   /* accept `cake-run run ARGS` like `cake run ARGS` */
		return run_main(argc - 1, argv + 1);
	return run_main(argc, argv);
}
