/*
 * verify.c — the verifier's dispatcher.
 *
 * verify_kernel builds the schedule model (src/sched/sched.h: roles,
 * resources, statements in program order, domain samples) once and hands it to each
 * rule family in a fixed order: a flat list, one line per family file.
 * Families never stop at the first finding, and severities come only from
 * the registry (src/base/registry.c).
 */
#include "verify_int.h"

void verify_kernel(Ctx *c, Kernel *k)
{
	if (!c || !k)
		return;
	Sched v;
	sched_build(&v, c, k);
	verify_resource(&v);
	verify_contract(&v);
	verify_barrier(&v);
	verify_race(&v);
	verify_dataflow(&v);
	verify_memory(&v);
	verify_schedule(&v);
	verify_deadlock(&v);
	sched_free(&v);
}
