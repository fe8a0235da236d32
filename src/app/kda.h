/*
 * kda.h — the KDA app: one Kimi Delta Attention layer (decode step or
 * prefill) on the GPU with the Cake IR kernels of kernels/kda/, checked
 * against the float64 recurrence (src/family/kda.h) and timed.
 *
 * The command `cake kda` (src/cmd/kda.c) parses options and calls app_kda;
 * docs/KDA.md describes the kernels, the oracle, the tolerance, the app and
 * the benchmark (bench/kda.sh).
 *
 * Module prefix: app_kda, Kda.
 */
#ifndef CAKE_APP_KDA_H
#define CAKE_APP_KDA_H

#include "../cake.h"

enum { KDA_MODE_DECODE, KDA_MODE_PREFILL };

#define KDA_MAX_SEQS 4096

/* What to run. */
typedef struct KdaOpts {
	long long B, H, T, K, V;    /* B sequences of T tokens (decode: T = 1..16 per step) */
	long long seqlens[KDA_MAX_SEQS];  /* --seqlens: packed sequences (prefill, B = 1) */
	int nseq;                   /* 0: no --seqlens */
	int mode;                   /* KDA_MODE_DECODE or KDA_MODE_PREFILL */
	bool state_bf16;
	bool lower_bound_gate;      /* --lower-bound L: the lower-bound gate */
	double lower_bound;
	bool json, check, graph;
	bool allow_spills;          /* --allow-spills: run a kernel that spills (a timing experiment) */
	int iters, warmup, graph_launches, check_heads, device;
	uint64_t seed;
	const char *dir;            /* the kernels folder (kernels/kda) */
	const char *kernel;         /* --kernel FILE[:NAME[+NAME...]]: another kernel, or a chain of kernels of
	                             * FILE run in order as one layer (NULL: the mode's default) */
	const char *poison;         /* --poison NAME=INDEX: a NaN planted into an input (tests the refusal) */
	const char *dump;           /* --dump DIR: every tensor (inputs, then the kernel's O and SN) as
	                             * DIR/NAME.bin and DIR/meta.json, for bench/kda.sh's comparison with FLA */
} KdaOpts;

/* Defaults: decode, B = 1, H = 32, T = 1, K = V = 128, f32 state, softplus
 * gate, 100 timed graph replays of 20 launches (decode) or 20 timed launches
 * (prefill), 5 warm-up, 64 checked (sequence, head) pairs, seed 1. */
KdaOpts app_kda_options(void);
/* A refusal of what the options mean (empty shapes, a head dimension the
 * kernels are not written for, --seqlens that are empty, hold a zero-length
 * sequence or do not add up to T, decode with more than 16 tokens or with
 * --seqlens, a lower bound outside [-5, 0)): the message, or NULL. */
const char *app_kda_refusal(const KdaOpts *o, char *buf, size_t n);
/* Run; the report (text, or JSON when o->json) is appended to out, errors go
 * to stderr. Returns 0 ok, 1 a failed check or a kernel problem, 2 bad input
 * (including a non-finite input value), GPU_EXIT_NO_DRIVER without a GPU
 * (after every CPU-side refusal). */
int app_kda(const KdaOpts *o, StrBuf *out);

#endif
