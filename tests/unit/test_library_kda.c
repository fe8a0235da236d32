/*
 * test_library_kda.c — the dispatch table of `cake library kda` (src/lib/rt/kda_dispatch.inc,
 * compiled into cake by src/lib/dispatch.c), proved on a grid of shapes without a GPU, in the
 * style of test_library.c's gemm and k-means grids.
 *
 * For every shape of the grid (B, T and H around the kernels' edges: T at 1, 16, 17, 63, 64,
 * 65 and up to the 2^30-token bound, H and N at the grid limit 65535; head dimensions 128 and
 * others; the five flags (PAIR set both ways); packed sequences of ragged, one-token, 63 and 64 one-token sequences,
 * and broken cu_seqlens: not starting at 0, not monotone, a zero-length sequence, not ending at
 * T) the dispatcher's verdict, every guard evaluated on its own, must say:
 *   - the shape is served exactly when an independent statement of the domain holds, and a
 *     refused shape names the failing clause;
 *   - a served shape has exactly one true guard (no gap, no overlap), the route the ordered
 *     first match takes, and it is the route the app's defaults give (src/app/kda.c,
 *     pick_kernel: the split chain for the lower-bound gate from 64 tokens, the per-token
 *     kernels below and for the softplus gate, decode by state dtype and gate; the bf16
 *     packed short prefill once per sequence);
 *   - every launch the route makes is inside its kernel's own `domain` (the parsed .cake
 *     file), its grid inside the hardware limits, its TMA strides 16-byte multiples;
 *   - every route is taken somewhere.
 * And the chunk-slot tables the library builds (kda_slots_fill) equal the app's
 * (kda_slot_tables, src/family/kda.c) over fixed and packed shapes, and so does its PAIR (the
 * state pass paired, kda_paired) the app's kda_state_paired; the --explain text names
 * the route and the clause of a refusal; shape parsing takes the kda keys and refuses bad ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lib/lib.h"
#include "family/kda.h"
#include "lib_launch.h"

/* The KDA shape variables (kda_dispatch.inc's KDA_VARS order). */
enum { V_B, V_T, V_H, V_DK, V_DV, V_N, V_VARLEN, V_BF16, V_DECODE, V_LB, V_PAIR };
/* Route numbers (KDA_ROUTES order). */
enum { R_SPLIT, R_SPLIT_BF16, R_SPLIT_PAIRED, R_SPLIT_BF16_PAIRED, R_PREFILL_LB, R_PREFILL_VARLEN_LB, R_PREFILL_BF16_LB, R_PREFILL_BF16_LB_SEQ, R_PREFILL,
       R_PREFILL_VARLEN, R_DECODE, R_DECODE_LB, R_DECODE_BF16, R_DECODE_BF16_LB, R_N };


static bool cu_valid(const int64_t *cu, long long n1, long long T)
{
	if (n1 < 2 || cu[0] != 0 || cu[n1 - 1] != T)
		return false;
	for (long long i = 0; i + 1 < n1; i++)
		if (cu[i + 1] <= cu[i])
			return false;
	return true;
}

/* The route the app's defaults give (src/app/kda.c, pick_kernel), plus the per-sequence one. */
static int want_route(const long long *v)
{
	bool bf16 = v[V_BF16], lb = v[V_LB], varlen = v[V_VARLEN];
	if (v[V_DECODE])
		return R_DECODE + (bf16 ? 2 : 0) + (lb ? 1 : 0);
	if (lb && v[V_T] >= 64)   /* PAIR: the app's kda_state_paired (test_kda_paired) */
		return (v[V_PAIR] ? R_SPLIT_PAIRED : R_SPLIT) + (bf16 ? 1 : 0);
	if (lb)
		return bf16 ? (varlen ? R_PREFILL_BF16_LB_SEQ : R_PREFILL_BF16_LB) : (varlen ? R_PREFILL_VARLEN_LB : R_PREFILL_LB);
	return varlen ? R_PREFILL_VARLEN : R_PREFILL;
}

typedef struct Grid {
	LibSet ls;
	LibShape *s;
	long long hits[R_N], served, refused;
} Grid;

static void check_shape(Grid *g, const char *what)
{
	const long long *v = g->s->v;
	LibVerdict *vd = malloc(sizeof *vd);
	assert_int_equal(lib_shape_verdict(&g->ls, g->s, vd), 0);
	long long B = v[V_B], T = v[V_T], H = v[V_H], N = v[V_N];
	bool varlen = v[V_VARLEN], decode = v[V_DECODE];
	bool want = v[V_DK] == 128 && v[V_DV] == 128 && B >= 1 && H >= 1 && T >= 1 && (!varlen || B == 1) && N >= 1 &&
	            (!varlen || N <= T) && (!decode || T <= 16) && (!decode || !varlen) && (decode || v[V_LB] || !v[V_BF16]) &&
	            H <= 65535 && N <= 65535 && T <= (1ll << 30) && B * T <= (1ll << 30) &&
	            (decode || (B * T + 64 * N) * H <= (1ll << 37)) && (!varlen || cu_valid(g->s->cu, g->s->ncu, T));
	if (vd->in_domain != want)
		fail_msg("%s: in_domain %d, the domain says %d (%s)", what, vd->in_domain, want, vd->failed ? vd->failed : "");
	if (!want) {
		assert_non_null(vd->failed);
		g->refused++;
		free(vd);
		return;
	}
	g->served++;
	int n = 0, first = -1;
	for (int r = 0; r < vd->nroutes[0]; r++)
		if (vd->guard[0][r]) {
			n++;
			if (first < 0)
				first = r;
		}
	if (n != 1)
		fail_msg("%s: %d true guards (%s)", what, n, n ? "overlap" : "gap");
	if (first != vd->route[0])
		fail_msg("%s: the dispatcher took route %d, the only true guard is %d", what, vd->route[0], first);
	if (vd->route[0] != want_route(v))
		fail_msg("%s: route %d, the app's defaults give %d", what, vd->route[0], want_route(v));
	g->hits[vd->route[0]]++;
	int nl = vd->route[0] <= R_SPLIT_BF16_PAIRED ? 3 : vd->route[0] == R_PREFILL_BF16_LB_SEQ ? (int)N : 1;
	if (vd->nlaunch != nl)
		fail_msg("%s: %d launches, expected %d", what, vd->nlaunch, nl);
	for (int l = 0; l < vd->nlaunch; l++)
		check_launch(&g->ls, vd->launch_kid[l], vd->launch_dims[l], what);
	free(vd);
}

/* Fill the offsets of lens[0 .. n) into s (cu[0] = 0). */
static void set_lens(LibShape *s, const long long *lens, int n)
{
	s->cu[0] = 0;
	for (int i = 0; i < n; i++)
		s->cu[i + 1] = s->cu[i] + lens[i];
	s->ncu = n + 1;
}

static void test_kda_grid(void **state)
{
	(void)state;
	Grid *g = calloc(1, sizeof *g);
	g->s = calloc(1, sizeof *g->s);
	StrBuf err = {0};
	if (lib_load(&g->ls, lib_family("kda"), "kernels/kda", CAKE_DERIVE, NULL, &err))
		fail_msg("%s", sb_str(&err));
	static const long long Bs[] = {0, 1, 2, 3, 65535, 65536};
	static const long long Ts[] = {0, 1, 2, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 1000, 16384, 1ll << 30, (1ll << 30) + 1};
	static const long long Hs[] = {0, 1, 2, 64, 65535, 65536};
	static const long long dims[][2] = {{128, 128}, {64, 128}, {128, 64}};
	char what[256];
	LibShape *s = g->s;
	for (size_t bi = 0; bi < NELEM(Bs); bi++)
		for (size_t ti = 0; ti < NELEM(Ts); ti++)
			for (size_t hi = 0; hi < NELEM(Hs); hi++)
				for (size_t di = 0; di < NELEM(dims); di++)
					for (int f = 0; f < 16; f++) {
						memset(s->v, 0, sizeof s->v);
						s->ncu = 0;
						long long *v = s->v;
						v[V_B] = Bs[bi], v[V_T] = Ts[ti], v[V_H] = Hs[hi], v[V_DK] = dims[di][0], v[V_DV] = dims[di][1];
						v[V_N] = v[V_B], v[V_BF16] = f & 1, v[V_DECODE] = f >> 1 & 1, v[V_LB] = f >> 2 & 1, v[V_PAIR] = f >> 3 & 1;
						snprintf(what, sizeof what, "kda B=%lld T=%lld H=%lld K=%lld V=%lld bf16=%d decode=%d lb=%d pair=%d", v[V_B],
						         v[V_T], v[V_H], v[V_DK], v[V_DV], f & 1, f >> 1 & 1, f >> 2 & 1, f >> 3 & 1);
						check_shape(g, what);
					}
	/* packed sequences */
	static const long long l1[] = {1}, l2[] = {63}, l3[] = {64}, l4[] = {65}, l5[] = {1, 1}, l6[] = {70, 1, 64, 9},
	                       l7[] = {100, 5, 40}, l8[] = {7, 1, 40}, l9[] = {0, 5}, l10[] = {5, 0}, l11[] = {64, 64, 64},
	                       l12[] = {3, -1, 5}, l13[] = {1 << 20, 1 << 20};
	static const struct { const long long *l; int n; } pats[] = {{l1, 1}, {l2, 1}, {l3, 1}, {l4, 1}, {l5, 2}, {l6, 4},
	                                                              {l7, 3}, {l8, 3}, {l9, 2}, {l10, 2}, {l11, 3},
	                                                              {l12, 3}, {l13, 2}};
	long long ones[64];
	for (int i = 0; i < 64; i++)
		ones[i] = 1;
	static const long long Hv[] = {1, 2, 64, 65536};
	for (size_t pi = 0; pi < NELEM(pats) + 2; pi++)
		for (size_t hi = 0; hi < NELEM(Hv); hi++)
			for (int f = 0; f < 16; f++)
				for (int twist = 0; twist < 4; twist++) {   /* 0 as is; 1 B = 2; 2 T = end + 1; 3 cu[0] = 1 */
					memset(s->v, 0, sizeof s->v);
					if (pi < NELEM(pats))
						set_lens(s, pats[pi].l, pats[pi].n);
					else
						set_lens(s, ones, pi == NELEM(pats) ? 63 : 64);   /* 63 launches; 64 tokens: the split */
					long long *v = s->v;
					v[V_B] = twist == 1 ? 2 : 1, v[V_T] = s->cu[s->ncu - 1] + (twist == 2), v[V_H] = Hv[hi];
					v[V_DK] = v[V_DV] = 128, v[V_N] = s->ncu - 1, v[V_VARLEN] = 1;
					v[V_BF16] = f & 1, v[V_DECODE] = f >> 1 & 1, v[V_LB] = f >> 2 & 1, v[V_PAIR] = f >> 3 & 1;
					if (twist == 3)
						s->cu[0] = 1;
					snprintf(what, sizeof what, "kda packed pattern %zu (%lld sequences, T=%lld) H=%lld bf16=%d decode=%d lb=%d pair=%d twist %d",
					         pi, v[V_N], v[V_T], v[V_H], f & 1, f >> 1 & 1, f >> 2 & 1, f >> 3 & 1, twist);
					check_shape(g, what);
				}
	print_message("kda: %lld shapes served, %lld refused; routes", g->served, g->refused);
	for (int r = 0; r < R_N; r++)
		print_message(" %lld", g->hits[r]);
	print_message("\n");
	for (int r = 0; r < R_N; r++)
		if (!g->hits[r])
			fail_msg("route %d is never taken on the grid", r);
	assert_true(g->refused > 0);
	sb_free(&err);
	lib_unload(&g->ls);
	free(g->s);
	free(g);
}

/* One prefill shape, lower-bound gate, f32 state, as the library's shape s and the app's
 * problem p (cu: room for its offsets): B sequences of T tokens, or (lens) n packed ones. */
static void twin_shape(LibShape *s, KdaProblem *p, int64_t *cu, long long B, long long T, long long H, const long long *lens, int n)
{
	memset(s->v, 0, sizeof s->v);
	memset(p, 0, sizeof *p);
	s->ncu = 0;
	long long *v = s->v;
	if (!lens) {
		v[V_B] = v[V_N] = B, v[V_T] = T;
		p->B = p->N = B, p->T = T;
	} else {
		set_lens(s, lens, n);
		v[V_B] = 1, v[V_T] = s->cu[s->ncu - 1], v[V_N] = s->ncu - 1, v[V_VARLEN] = 1;
		for (long long i = 0; i < s->ncu; i++)
			cu[i] = s->cu[i];
		p->B = 1, p->T = v[V_T], p->N = v[V_N], p->cu = cu, p->packed = true;
	}
	v[V_H] = p->H = H, v[V_DK] = v[V_DV] = 128, v[V_LB] = 1;
}

/* The library's PAIR (kda_dispatch.inc, kda_paired) is the app's kda_state_paired, over fixed
 * and packed shapes and SM counts (each side on its own copy of the estimate). */
static void test_kda_paired(void **state)
{
	(void)state;
	LibShape *s = calloc(1, sizeof *s);
	static const long long fixed[][3] = {{1, 8192, 64}, {1, 8192, 66}, {1, 8192, 67}, {1, 8192, 96}, {8, 1024, 64}, {8, 1024, 96},
	                                     {1, 32768, 32}, {2, 100, 4}, {64, 256, 128}, {600, 128, 64}};
	static const long long l1[] = {1300, 547, 2048, 963, 271, 3063}, l2[] = {8000, 30, 30, 30, 30, 30}, l3[] = {64},
	                       l4[] = {200, 200, 1}, l5[] = {3, 130, 64, 1, 1, 77};
	static const struct { const long long *l; int n; } pats[] = {{l1, 6}, {l2, 6}, {l3, 1}, {l4, 3}, {l5, 6}};
	static const long long Hp[] = {1, 32, 64, 96}, sms[] = {1, 66, 114, 132, 264};
	int checked = 0, paired = 0;
	for (size_t c = 0; c < NELEM(fixed) + NELEM(pats) * NELEM(Hp); c++)
		for (size_t si = 0; si < NELEM(sms); si++) {
			KdaProblem p;
			int64_t cu[16];
			size_t pi = (c - NELEM(fixed)) / NELEM(Hp);
			if (c < NELEM(fixed))
				twin_shape(s, &p, cu, fixed[c][0], fixed[c][1], fixed[c][2], NULL, 0);
			else
				twin_shape(s, &p, cu, 1, 0, Hp[(c - NELEM(fixed)) % NELEM(Hp)], pats[pi].l, pats[pi].n);
			int a = lib_kda_paired(s, sms[si]);
			bool b = kda_state_paired(&p, sms[si]);
			if (a != (int)b)
				fail_msg("case %zu at %lld SMs: the library pairs %d, the app %d", c, sms[si], a, (int)b);
			checked++;
			paired += a;
		}
	print_message("kda PAIR: %d shapes x SM counts agree, %d paired\n", checked, paired);
	assert_true(paired > 0 && paired < checked);
	free(s);
}

/* The library's chunk-slot tables are the app's. */
static void test_kda_slot_tables(void **state)
{
	(void)state;
	LibShape *s = calloc(1, sizeof *s);
	static const long long fixed[][2] = {{1, 64}, {1, 65}, {2, 100}, {3, 128}, {1, 200}, {5, 1000}, {2, 4097}};
	static const long long l1[] = {70, 1, 64, 9}, l2[] = {100, 5, 40}, l3[] = {64}, l4[] = {1, 63}, l5[] = {200, 200, 1},
	                       l6[] = {3, 130, 64, 1, 1, 77};
	static const struct { const long long *l; int n; } pats[] = {{l1, 4}, {l2, 3}, {l3, 1}, {l4, 2}, {l5, 3}, {l6, 6}};
	int checked = 0;
	for (size_t c = 0; c < NELEM(fixed) + NELEM(pats); c++) {
		KdaProblem p;
		int64_t cu[16];
		if (c < NELEM(fixed))
			twin_shape(s, &p, cu, fixed[c][0], fixed[c][1], 2, NULL, 0);
		else
			twin_shape(s, &p, cu, 1, 0, 2, pats[c - NELEM(fixed)].l, pats[c - NELEM(fixed)].n);
		long long ns, np;
		int32_t *sl, *cs, *ord, *ps;
		KdaSlots ref;
		bool a = lib_kda_slot_tables(s, &ns, &np, &sl, &cs, &ord, &ps), b = kda_slot_tables(&p, &ref);
		assert_int_equal(a, b);
		assert_true(a);
		assert_int_equal(ns, ref.ns);
		assert_int_equal(np, ref.np);
		assert_memory_equal(sl, ref.sl, sizeof *sl * (size_t)ns * KDA_SLOT_FIELDS);
		assert_memory_equal(cs, ref.cs, sizeof *cs * (size_t)(p.N + 1));
		assert_memory_equal(ord, ref.ord, sizeof *ord * (size_t)p.N);
		assert_memory_equal(ps, ref.ps, sizeof *ps * (size_t)np);
		free(sl), free(cs), free(ord), free(ps);
		kda_slots_free(&ref);
		checked++;
	}
	/* no tables below 64 tokens, nor outside the domain */
	memset(s->v, 0, sizeof s->v);
	s->ncu = 0;
	s->v[V_B] = 1, s->v[V_T] = 63, s->v[V_N] = 1, s->v[V_H] = 1, s->v[V_DK] = s->v[V_DV] = 128, s->v[V_LB] = 1;
	long long ns, np;
	int32_t *sl, *cs, *ord, *ps;
	assert_false(lib_kda_slot_tables(s, &ns, &np, &sl, &cs, &ord, &ps));
	s->v[V_T] = 64, s->v[V_DK] = 64;
	assert_false(lib_kda_slot_tables(s, &ns, &np, &sl, &cs, &ord, &ps));
	assert_int_equal(checked, 13);
	free(s);
}

static int explain(const LibSet *ls, const char *spec, StrBuf *out)
{
	LibShape *s = malloc(sizeof *s);
	char e[256];
	if (!lib_shape_parse(ls->fam, spec, s, e, sizeof e))
		fail_msg("'%s' does not parse: %s", spec, e);
	sb_free(out);
	int rc = lib_shape_explain(ls, s, out);
	free(s);
	return rc;
}

static void test_kda_explain(void **state)
{
	(void)state;
	LibSet ls;
	StrBuf err = {0}, out = {0};
	assert_int_equal(lib_load(&ls, lib_family("kda"), "kernels/kda", CAKE_DERIVE, NULL, &err), 0);
	assert_int_equal(explain(&ls, "B=2,T=100,H=4", &out), R_SPLIT);
	assert_non_null(strstr(sb_str(&out), "chunk slots: 4 of 64 tokens (2 partial entries)"));
	assert_non_null(strstr(sb_str(&out), "kernels: kda_split32_prep_lb + kda_split32_state_lb + kda_split_tail"));
	assert_int_equal(explain(&ls, "B=1,T=8192,H=64,state=bf16", &out), R_SPLIT_BF16);
	assert_non_null(strstr(sb_str(&out), "state pass: PAIR = 0, one CTA per value half"));
	/* 2 H N = 192 CTAs of one chain: more than a wave of 132 SMs, so the state pass pairs */
	assert_int_equal(explain(&ls, "B=1,T=8192,H=96", &out), R_SPLIT_PAIRED);
	assert_non_null(strstr(sb_str(&out), "state pass: PAIR = 1, both value halves"));
	assert_non_null(strstr(sb_str(&out), "kernels: kda_split32_prep_lb + kda_split32_state2_lb + kda_split_tail"));
	assert_int_equal(explain(&ls, "B=8,T=1024,H=64,state=bf16", &out), R_SPLIT_BF16_PAIRED);
	assert_int_equal(explain(&ls, "B=1,T=8192,H=96,PAIR=0", &out), R_SPLIT);   /* given, not derived */
	assert_int_equal(explain(&ls, "B=1,T=63,H=64", &out), R_PREFILL_LB);
	assert_non_null(strstr(sb_str(&out), "chunk slots: none (T = 63 < 64"));
	assert_int_equal(explain(&ls, "H=8,seqlens=7:1:40,state=bf16", &out), R_PREFILL_BF16_LB_SEQ);
	assert_non_null(strstr(sb_str(&out), "once per sequence (3 launches)"));
	assert_int_equal(explain(&ls, "H=8,seqlens=100:28:7", &out), R_SPLIT);
	assert_non_null(strstr(sb_str(&out), "3 sequences packed through cu_seqlens"));
	assert_int_equal(explain(&ls, "B=4,T=1,H=32,mode=decode,gate=softplus", &out), R_DECODE);
	assert_int_equal(explain(&ls, "B=4,T=16,H=32,mode=decode,state=bf16", &out), R_DECODE_BF16_LB);
	assert_int_equal(explain(&ls, "B=2,T=300,H=32,gate=softplus", &out), R_PREFILL);
	/* refusals name the clause */
	static const struct { const char *spec, *clause; } bad[] = {
		{"B=1,T=64,H=4,DK=64", "'DK == 128' is false"},
		{"B=1,T=0,H=4", "'T >= 1' is false: at least one token"},
		{"B=1,T=17,H=4,mode=decode", "'DECODE == 0 || T <= 16' is false"},
		{"B=1,T=64,H=4,gate=softplus,state=bf16", "'DECODE == 1 || LB == 1 || BF16 == 0' is false"},
		{"H=2,cu=0:5:3:10", "cu_seqlens[1] = 5 > cu_seqlens[2] = 3: cu_seqlens is not monotone"},
		{"H=2,seqlens=4:0:5", "sequence 1 has no token"},
		{"H=2,T=12,seqlens=4:5", "cu_seqlens ends at 9, not at T = 12"},
		{"H=2,cu=1:5:10", "cu_seqlens[0] = 1: cu_seqlens starts at 0"},
		{"B=2,H=2,seqlens=4:5", "'VARLEN == 0 || B == 1' is false"},
		{"H=2,seqlens=4:5,mode=decode", "'DECODE == 0 || VARLEN == 0' is false"},
		{"B=1,T=64,H=65536", "'H <= 65535' is false"},
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		if (explain(&ls, bad[i].spec, &out) != -2)
			fail_msg("%s: not refused with E_SHAPE:\n%s", bad[i].spec, sb_str(&out));
		if (!strstr(sb_str(&out), bad[i].clause) || !strstr(sb_str(&out), "route: none (CAKE_KDA_E_SHAPE)"))
			fail_msg("%s: the explanation does not name '%s':\n%s", bad[i].spec, bad[i].clause, sb_str(&out));
	}
	/* the one-line form */
	LibShape *s = malloc(sizeof *s);
	char e[256];
	assert_true(lib_shape_parse(ls.fam, "B=2,T=100,H=4", s, e, sizeof e));
	sb_free(&out);
	assert_int_equal(lib_shape_line(&ls, s, &out), R_SPLIT);
	assert_string_equal(sb_str(&out), "split NS=4 NP=2");
	free(s);
	sb_free(&out);
	sb_free(&err);
	lib_unload(&ls);
}

static void test_kda_parse(void **state)
{
	(void)state;
	const LibFamily *f = lib_family("kda");
	assert_non_null(f);
	LibShape *s = malloc(sizeof *s);
	char e[256];
	assert_true(lib_shape_parse(f, "B=2,T=100,H=4", s, e, sizeof e));
	assert_true(s->v[V_B] == 2 && s->v[V_T] == 100 && s->v[V_H] == 4 && s->v[V_DK] == 128 && s->v[V_DV] == 128 &&
	            s->v[V_N] == 2 && !s->v[V_VARLEN] && !s->v[V_BF16] && !s->v[V_DECODE] && s->v[V_LB] == 1 && s->ncu == 0);
	assert_true(lib_shape_parse(f, "H=4,seqlens=3:5:7,state=bf16,gate=softplus,mode=decode", s, e, sizeof e));
	assert_true(s->v[V_B] == 1 && s->v[V_T] == 15 && s->v[V_N] == 3 && s->v[V_VARLEN] == 1 && s->v[V_BF16] == 1 &&
	            s->v[V_DECODE] == 1 && s->v[V_LB] == 0 && s->ncu == 4 && s->cu[3] == 15);
	assert_true(lib_shape_parse(f, "H=4,cu=0:3:8", s, e, sizeof e));
	assert_true(s->v[V_T] == 8 && s->v[V_N] == 2);
	assert_false(lib_shape_parse(f, "B=2,T=100", s, e, sizeof e));
	assert_non_null(strstr(e, "no H"));
	assert_false(lib_shape_parse(f, "B=2,T=100,H=4,state=f16", s, e, sizeof e));
	assert_non_null(strstr(e, "state 'f16': use f32 or bf16"));
	assert_false(lib_shape_parse(f, "B=2,T=100,H=4,mode=train", s, e, sizeof e));
	assert_false(lib_shape_parse(f, "H=4,seqlens=3:x", s, e, sizeof e));
	assert_non_null(strstr(e, "seqlens"));
	assert_false(lib_shape_parse(f, "H=4,seqlens=3:", s, e, sizeof e));
	assert_false(lib_shape_parse(f, "B=1,H=4", s, e, sizeof e));   /* no T and no seqlens */
	assert_non_null(strstr(e, "no T"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kda_grid),
		cmocka_unit_test(test_kda_slot_tables),
		cmocka_unit_test(test_kda_paired),
		cmocka_unit_test(test_kda_explain),
		cmocka_unit_test(test_kda_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
