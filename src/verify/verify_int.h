/*
 * verify_int.h — what the rule families share: the schedule model and the
 * reporting helper.
 *
 * verify_kernel builds one schedule model per kernel (src/sched/sched.h:
 * roles, pipelines, shared buffers and their layout, barriers, fragments,
 * the preorder statement index and the sampled domain points). It is the
 * same model the lowering's derive step reads, so the verifier checks the
 * facts the lowering will use. Each family (resource.c, contract.c,
 * barrier.c, race.c, dataflow.c, memory.c, schedule.c, deadlock.c) reads the model
 * and reports through v_report (report.c); none keeps state of its own.
 */
#ifndef CAKE_VERIFY_INT_H
#define CAKE_VERIFY_INT_H

#include "verify.h"
#include "../sched/sched.h"

#include <string.h>

/* ---- the families: each runs all its checks on the model, reports every finding ---- */
/* CK-RES-*: shared memory layout, registers, threads, barrier limits. */
void verify_resource(Sched *v);
/* CK-HW-*: wgmma/mma/TMA/cp.async contracts, target availability, clusters. */
void verify_contract(Sched *v);
/* CK-BAR-*: arrival counts, tx bytes, producers, pipeline trip counts. */
void verify_barrier(Sched *v);
/* CK-RACE-*: RAW/WAR on stages, wgmma in flight, proxy fences, handoffs. */
void verify_race(Sched *v);
/* CK-DATA-*: swizzle vs wgmma, fragment splits, tile strides, loop coverage. */
void verify_dataflow(Sched *v);
/* CK-SCHED-*: initialisation, unused resources, dead roles, trip counts. */
void verify_schedule(Sched *v);
/* CK-MEM-*: global tensor coverage, single writes, bounds; ring stages read after release. */
void verify_memory(Sched *v);
/* CK-DEAD-*: the deadlock model checker. */
void verify_deadlock(Sched *v);

/* ---- report.c: the helper for findings ---- */
/* diag_add with the role/resource/barrier/pipeline fields set when non-NULL. */
Diag *v_report(Sched *v, const char *rule, Span span, int role, const char *resource,
               int bar, int pipe, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* ---- fix.c: machine-applicable fixes attached at report sites ---- */
/* Attach to d a fix replacing the number after keyword kw ("arrivals",
 * "stages", "regs") in declaration decl with value; NULL (nothing attached)
 * when the source has no such token. */
DiagFix *v_fix_decl_int(Sched *v, Diag *d, const Decl *decl, const char *kw, long long value);
/* Attach to d a fix inserting the missing `arrive` of ring barrier b in its
 * one producer's pipelined loop, after the last use of the ring there (and
 * declaring the arrivals that gives); NULL when the repair is not mechanical
 * (see fix.c) or some role already arrives on b. */
DiagFix *v_fix_arrive(Sched *v, Diag *d, int b);

#endif
