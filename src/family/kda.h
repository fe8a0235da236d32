/*
 * kda.h — Kimi Delta Attention (KDA): the float64 oracle, a float32 chunked
 * reference, input validation and seeded inputs (src/family/kda.c).
 *
 * The family descriptors `kda` (any T, packed variable-length sequences
 * through cu_seqlens) and `kda_decode` (T = 1..16 tokens per sequence, the
 * speculative-decode window) are defined in kda.c; this header is the API the
 * app (src/app/kda.c) and the unit tests share with them. Nothing here
 * touches a GPU.
 *
 * The math (docs/KDA.md, /work/shared/KDA.md). Per sequence n and head h the
 * state S is K x V (f64 here). Per token t, with q, k, g_raw [K], v [V] and
 * beta_logit the bf16 inputs:
 *
 *   q^ = q (sum q^2 + 1e-6)^-1/2 K^-1/2      k^ = k (sum k^2 + 1e-6)^-1/2
 *   beta = sigmoid(beta_logit)
 *   g   = -exp(A_log[h]) softplus(g_raw + dt_bias[h])          (KDA_GATE_SOFTPLUS)
 *       = lambda sigmoid(exp(A_log[h]) (g_raw + dt_bias[h]))   (KDA_GATE_LOWER_BOUND)
 *   S  <- Diag(exp(g)) S
 *   S  <- S + beta k^ (v - S^T k^)^T
 *   o   = S^T q^
 *
 * Layouts. q, k, g [B, T, H, K], v and o [B, T, H, V], beta [B, T, H] (bf16);
 * A_log [H], dt_bias [H, K] (f32). With cu_seqlens (int64, N+1 offsets,
 * cu[0] = 0, cu[N] = T, strictly increasing) B = 1 and the T tokens hold N
 * packed sequences; without it there are N = B sequences of T tokens. The
 * state is per sequence: [N, H, V, K] ("V-first": row v holds the K weights
 * of value channel v, Cake's layout) or [N, H, K, V] (FLA's), f32 or bf16.
 *
 * Module prefix: kda_.
 */
#ifndef CAKE_FAMILY_KDA_H
#define CAKE_FAMILY_KDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KDA_GATE_SOFTPLUS = 0, KDA_GATE_LOWER_BOUND = 1 };

/* The L2-norm epsilon of q and k (added to the sum of squares). */
#define KDA_L2_EPS 1e-6

/* One KDA problem: shape, options and the host images of the inputs. */
typedef struct KdaProblem {
	long long B, T, H, K, V;
	long long N;                /* sequences: B, or the cu_seqlens count */
	const int64_t *cu;          /* N + 1 offsets (B == 1), or NULL */
	bool packed;                /* the sequences are packed through cu_seqlens (cu may still be
	                             * NULL when only the shape is known) */
	int gate;                   /* KDA_GATE_SOFTPLUS or KDA_GATE_LOWER_BOUND */
	double lower_bound;         /* lambda of the lower-bound gate, in [-5, 0) */
	bool state_kv;              /* states [N, H, K, V] instead of [N, H, V, K] */
	bool state_bf16;            /* states in bf16 instead of f32 */
	const uint16_t *q, *k, *v, *g, *beta;   /* bf16 bits */
	const float *alog, *dtb;
	const void *s0;             /* initial states (NULL: zero) */
} KdaProblem;

/* Tokens of sequence n and the first one's index into the T axis (*b the batch). */
long long kda_seq(const KdaProblem *p, long long n, long long *t0, long long *b);

/* ---- refusals (a message into buf and buf returned, or NULL when fine) ---- */

/* Shape refusals: B, T, H or N zero; K or V not the kernel's (kernel_k /
 * kernel_v, 0 = any); cu_seqlens with B != 1, or more sequences than tokens. */
const char *kda_refuse_shape(const KdaProblem *p, long long kernel_k, long long kernel_v, char *buf, size_t n);
/* cu_seqlens refusals: n1 < 2 offsets, cu[0] != 0, a decreasing pair (not
 * monotone), an equal pair (a zero-length sequence), cu[n1-1] != T. */
/* true for the name of one of the family's tensors (Q, K, V, G, Beta, Alog, Dtb, S0, SN, O, Cu,
 * and the slot tables):
 * what a layer binds as its inputs and outputs, every other global of a chain being a workspace */
bool kda_is_buffer(const char *name);
/* true for the name of a chunk-slot table (Sl, Cs, Ord, Ps; below): inputs the caller derives
 * from the shape and cu_seqlens (kda_slot_tables), never seeded */
bool kda_is_slot_table(const char *name);

const char *kda_refuse_seqlens(const int64_t *cu, long long n1, long long T, char *buf, size_t n);
/* A lower bound outside [-5, 0) for the lower-bound gate. */
const char *kda_refuse_gate(const KdaProblem *p, char *buf, size_t n);
/* Non-finite input values (q, k, v, g, beta, A_log, dt_bias, the initial
 * state): the count, and the first one named in buf ("" when none). */
long long kda_nonfinite(const KdaProblem *p, char *buf, size_t n);

/* ---- references ---- */

/* The float64 recurrence for sequence n, head h: o[len * V] (token-major),
 * S[K * V] (S[k * V + v]) = the final state. Returns 0, -1 when n or h is
 * out of range. */
int kda_ref_head(const KdaProblem *p, long long n, long long h, double *o, double *S);

/* The chunked algebra of docs/KDA.md evaluated in float32 with chunk C (16, 32
 * or 64): G = the cumulative log-decay inside a chunk, A_kk, the forward
 * substitution of (I + A_kk), w, u, v' = u - w S, o = (q e^G) S + A_qk v', the
 * state update. With bf16_ops every matrix-product operand is rounded to bf16
 * first (what tensor cores see: q e^G, k e^-G, S, v', w, the A tiles) and
 * products accumulate in f32. Outputs as kda_ref_head, in f32. Returns 0,
 * -1 on a bad argument or out of memory. */
int kda_chunked_f32_head(const KdaProblem *p, long long n, long long h, int C, bool bf16_ops, float *o, float *S);

/* ---- the check ---- */

/* A tolerance: the largest per-(sequence, head) relative error
 * ||out - ref||_2 / ||ref||_2 allowed on o and on the final state, and the
 * gross element bound |out - ref| <= elem (rms(ref) + |ref|) that catches a
 * localised error the norm would average away. The numbers and how they
 * were measured are in kda.c and docs/KDA.md. */
typedef struct KdaTol {
	double o, state, elem;
} KdaTol;

/* kda (chunked prefill with bf16 tensor-core operands): o and state 8e-3,
 * elements 0.1. */
extern const KdaTol KDA_TOL_PREFILL;
/* kda_decode (per-token f32 math): o 4e-3, an f32 state 1e-4, elements 0.02;
 * KDA_TOL_DECODE_BF16 for a bf16 state (4e-3). */
extern const KdaTol KDA_TOL_DECODE, KDA_TOL_DECODE_BF16;

typedef struct KdaCheck {
	long long heads;            /* (sequence, head) pairs compared */
	double o_rel, s_rel;        /* the largest relative errors over those pairs */
	long long o_nan, s_nan;     /* non-finite outputs (the whole of o and SN is scanned) */
	long long bad;              /* elements past the gross element bound */
	long long first_bad;        /* flat index (into o, or into the state when first_bad_state) */
	bool first_bad_state;
	double first_bad_out, first_bad_ref;
	long long worst_n, worst_h; /* the pair with the largest error */
} KdaCheck;

/* Compare o (bf16, [B, T, H, V]) and sn (the final states, p's state dtype and
 * layout; NULL: not checked) against the float64 recurrence on the pairs
 * (n, h) listed in pairs[0 .. 2 * npairs), over nthreads POSIX threads.
 * Returns 0 pass, 1 fail (tolerance tol), -1 out of memory. */
int kda_check(const KdaProblem *p, const uint16_t *o, const void *sn, const long long *pairs, int npairs, const KdaTol *tol,
              int nthreads, KdaCheck *res);
/* The (sequence, head) pairs to check: every pair when there are at most
 * want, else the first, the last and seeded others, capped so that the
 * float64 work stays near flop_budget (at least 2). malloc'd [2 * *npairs]. */
long long *kda_sample_pairs(const KdaProblem *p, int want, double flop_budget, uint64_t seed, int *npairs);

/* ---- inputs ---- */

/* n_seq lengths of packed sequences summing to T, every one >= 1, varied
 * (seeded); cu[0 .. n_seq] the offsets. Needs 1 <= n_seq <= T. */
void kda_segments(long long n_seq, long long T, uint64_t seed, int64_t *cu);
/* ---- chunk slots (the split prefill, kernels/kda/kda_prefill_split_lb.cake) ----
 *
 * The split prefill works on 64-token chunk *slots*, not on the T axis: sequence n
 * (kda_seq: tokens t0 .. t0 + len - 1 of batch entry b) has ceil(len / 64) slots, slot j
 * holding its tokens t0 + 64 j .. min(t0 + 64 j + 64, t0 + len) - 1. A slot is a window
 * of 64 rows of the T axis starting at token `st` whose rows lo .. hi - 1 are the slot's
 * tokens; the kernels treat the other rows as absent (no key, no decay), so a sequence's
 * last, partial chunk never mixes with the next sequence. A window never reaches past T:
 * when st + 64 > T it starts at T - 64 instead and its tokens sit at rows lo .. hi - 1
 * with lo > 0 (so T >= 64 is needed). Slots are numbered sequence by sequence; their
 * count is rounded up to an even number (the prep kernel takes slots in pairs) with an
 * empty slot (lo = hi = 0). A partial slot (lo > 0 or hi < 64) has an entry in the
 * partial list: the state kernel writes its 64 output rows to that entry of a small
 * workspace, and the tail kernel copies its valid rows into O (a full slot's rows are
 * stored into O directly).
 *
 *   sl  [ns, KDA_SLOT_FIELDS] i32   b, st, lo, hi, partial entry (-1: a full slot), 0, 0, 0
 *   cs  [n + 1] i32                 sequence n's slots are cs[n] .. cs[n + 1] - 1
 *   ord [n] i32                     the sequences by slot count, most first (ties by index):
 *                                   the state kernel's CTAs take them in this order
 *   ps  [np] i32                    the slot of each partial entry; -1 pads (np >= 1) */
#define KDA_SLOT_FIELDS 8
typedef struct KdaSlots {
	long long ns, np, n;
	int32_t *sl, *cs, *ord, *ps;
} KdaSlots;

/* Slot and partial-entry counts of the problem's sequences (p->cu, or B sequences of T);
 * 0 when T < 64 or a count overflows 32 bits. */
long long kda_slot_count(const KdaProblem *p, long long *np);
/* The tables (malloc'd; kda_slots_free). false when kda_slot_count is 0. */
bool kda_slot_tables(const KdaProblem *p, KdaSlots *s);
/* The table named Sl, Cs, Ord or Ps and its element count (NULL and 0 for another name, or
 * when there are no tables). */
const int32_t *kda_slot_table(const KdaSlots *s, const char *name, size_t *elems);
void kda_slots_free(KdaSlots *s);

/* The split chain's state pass (kernels/kda/kda_prefill_split_lb.cake) comes in two layouts:
 * kda_split32_state_lb, one CTA per (value half, head, sequence), 2 H N CTAs of one chain each,
 * and kda_split32_state2_lb, one CTA per (head, sequence) whose two warpgroups each carry a value
 * half's chain. Each CTA holds an SM (its ring's shared memory) for its sequence's chain of
 * slots; two chains on one SM each take about 7/5 of a lone chain's time (measured on an H100,
 * session 21: 488 against 354 us at H = 64, T = 8192). kda_state_paired estimates both grids on
 * sms SMs, the CTAs placed longest sequence first on the SM that frees first (the kernels' Ord
 * order, as the block scheduler takes them), and is true when the paired grid finishes first:
 * where the 2 H N CTAs need more than one wave (H = 96 one sequence on 132 SMs; 8 sequences),
 * not where they fit in one (H = 64 one sequence) or one long sequence dominates. Above
 * KDA_PAIR_SIM_CTAS CTAs it compares the continuous bounds max(longest chain, work / SMs).
 * src/lib/rt/kda_dispatch.inc (kda_paired) computes the same for the library's routes. */
#define KDA_PAIR_COST_NUM 7
#define KDA_PAIR_COST_DEN 5
#define KDA_PAIR_SIM_CTAS 65536
#define KDA_NOMINAL_SMS 132   /* H100 and H200 SXM: the app's choice before a device is open */
bool kda_state_paired(const KdaProblem *p, long long sms);

/* Seeded gate parameters with long- and short-memory channels: A_log
 * uniform in [-3, 0], dt_bias uniform in [-4, 0] (so exp(g) spans about
 * 0.27 .. 0.9997). */
void kda_fill_gate_params(float *alog, float *dtb, long long H, long long K, uint64_t seed);


#endif
