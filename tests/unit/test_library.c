/*
 * test_library.c — the dispatch tables of `cake library` (src/lib/), proved on
 * grids of shapes without a GPU.
 *
 * For every shape of a grid built around each tile multiple (just below, at,
 * just above), tiny shapes, the boundaries of the declared domain and
 * LLM-layer shapes, the dispatcher the libraries run (the same text,
 * src/lib/rt/gemm_dispatch.inc and kmeans_dispatch.inc, compiled into cake) is asked for its verdict,
 * with every guard evaluated on its own:
 *   - a shape is served exactly when an independent statement of the domain
 *     holds; a refused shape names the clause that fails;
 *   - a served shape has exactly one true guard per axis (no gap, no
 *     overlap), and it is the route the ordered first-match takes;
 *   - every kernel the route launches accepts the dims it is launched at by
 *     its own `domain` (evaluated on the parsed .cake file, not the
 *     dispatcher's copy), the padded dims are the least tile multiples
 *     covering the shape, and the launch geometry the Plan derives stays
 *     within the hardware's grid limits with 16-byte TMA strides;
 *   - every route is taken somewhere on the grid (the table has no dead row).
 * Plus the --domain clauses (cond.c): parsing, errors, evaluation, and that
 * they narrow the domain without opening gaps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lib/lib.h"
#include "lib/rt/cake_gemm.h"
#include "lib_launch.h"

/* Check the launch of kid at family dims fd: domain, grid limits, TMA strides. */
/* Is kid the kernel named name in ls's family? */
static bool is_kernel(const LibSet *ls, int kid, const char *name)
{
	return kid >= 0 && kid < ls->fam->nkernels && !strcmp(ls->fam->kernels[kid], name);
}


/* Exactly one guard of each axis, and it is the chosen route. */
static void check_guards(const LibVerdict *v, const char *what)
{
	for (int a = 0; a < v->naxes; a++) {
		int n = 0, first = -1;
		for (int r = 0; r < v->nroutes[a]; r++)
			if (v->guard[a][r]) {
				n++;
				if (first < 0)
					first = r;
			}
		if (n != 1)
			fail_msg("%s: axis %d has %d true guards (%s)", what, a, n, n ? "overlap" : "gap");
		if (first != v->route[a])
			fail_msg("%s: axis %d: the dispatcher took route %d, the only true guard is %d", what, a, v->route[a], first);
	}
}

static long long ceil_to(long long v, long long m)
{
	return (v + m - 1) / m * m;
}

/* Values around multiples of m (m-1, m, m+1) for the multiples listed. */
static int around(long long *out, int n, const long long *mults, int nm, long long m)
{
	for (int i = 0; i < nm; i++)
		for (long long d = -1; d <= 1; d++)
			out[n++] = mults[i] * m + d;
	return n;
}

static void test_gemm_grid(void **state)
{
	(void)state;
	LibSet ls;
	StrBuf err = {0};
	int rc = lib_load(&ls, lib_family("gemm"), "kernels/gemm", CAKE_DERIVE, NULL, &err);
	if (rc)
		fail_msg("%s", sb_str(&err));
	long long Ms[96], Ns[96], Ks[64];
	int nm = 0, nn = 0, nk = 0;
	static const long long mm[] = {1, 2, 3, 8, 32, 64, 130, 133};   /* x128 */
	static const long long small[] = {1, 2, 3, 7, 8, 9, 16, 100, 1000, 3000, 11008, 16384};
	nm = around(Ms, nm, mm, 8, 128);
	for (size_t i = 0; i < NELEM(small); i++)
		Ms[nm++] = small[i];
	Ms[nm++] = 0, Ms[nm++] = 8388480, Ms[nm++] = 8388481;
	static const long long nmul[] = {1, 2, 3, 5, 16, 43, 112};  /* x128 and x256 */
	nn = around(Ns, nn, nmul, 7, 128);
	nn = around(Ns, nn, nmul, 7, 256);
	static const long long ln[] = {1, 8, 768, 1024, 2048, 3072, 4096, 5120, 8192, 11008, 14336, 28672, 0};
	for (size_t i = 0; i < NELEM(ln); i++)
		Ns[nn++] = ln[i];
	static const long long ks[] = {0, 1, 7, 8, 16, 56, 64, 72, 120, 128, 136, 184, 192, 4088, 4096, 4104, 5120, 11008,
	                               14336, 28672, 4097, 2147483584, 2147483592};
	for (size_t i = 0; i < NELEM(ks); i++)
		Ks[nk++] = ks[i];
	/* the persistent threshold: 132 and 133 tiles of 128x256 */
	Ms[nm++] = 128 * 132, Ms[nm++] = 128 * 133;
	long long hits[LIB_MAX_ROUTES] = {0}, served = 0, refused = 0;
	char what[128];
	for (int i = 0; i < nm; i++)
		for (int j = 0; j < nn; j++)
			for (int q = 0; q < nk; q++) {
				long long M = Ms[i], N = Ns[j], K = Ks[q], v[3] = {M, N, K};
				snprintf(what, sizeof what, "gemm M=%lld N=%lld K=%lld", M, N, K);
				LibVerdict vd;
				assert_int_equal(lib_verdict(&ls, v, 0, &vd), 0);
				bool want = M >= 1 && N >= 1 && K >= 8 && K % 8 == 0 && M <= 8388480 && N <= 2147483392 &&
				            K <= 2147483584;
				if (vd.in_domain != want)
					fail_msg("%s: in_domain %d, the domain says %d", what, vd.in_domain, want);
				if (!want) {
					assert_non_null(vd.failed);
					refused++;
					continue;
				}
				served++;
				check_guards(&vd, what);
				hits[vd.route[0]]++;
				/* one kernel, or for split-K and stream-K (directly or under padded) the slices or
				 * CTAs and their sum */
				/* (the S dim is bound for every kernel; the dispatcher splits from S = 4, or from 2 with
				 * slices of 64+ K steps) */
				long long S0 = vd.launch_dims[0][3], K0 = vd.launch_dims[0][2];
				bool splits = S0 >= 4 || (S0 >= 2 && K0 >= 4096 * S0);
				int k0 = vd.launch_kid[0], k1 = vd.nlaunch > 1 ? vd.launch_kid[1] : -1;
				bool split = vd.nlaunch == 2 && splits && vd.launch_dims[1][3] == S0 &&
				             is_kernel(&ls, k0, "gemm_bf16_splitk") && is_kernel(&ls, k1, "gemm_splitk_reduce");
				bool same = vd.nlaunch == 2 && !memcmp(vd.launch_dims[0], vd.launch_dims[1], sizeof vd.launch_dims[0]);
				bool sk = same && is_kernel(&ls, k0, "gemm_bf16_streamk") && is_kernel(&ls, k1, "gemm_streamk_fixup");
				bool skn = same && is_kernel(&ls, k0, "gemm_bf16_streamk128") && is_kernel(&ls, k1, "gemm_streamk128_fixup");
				int r0 = vd.route[0];
				if (vd.nlaunch != 1 && !split && !sk && !skn)
					fail_msg("%s: %d launches (the padded shape has no direct route?)", what, vd.nlaunch);
				if (split != (r0 == CAKE_GEMM_ROUTE_SPLITK || (r0 == CAKE_GEMM_ROUTE_PADDED && splits && is_kernel(&ls, k0, "gemm_bf16_splitk"))))
					fail_msg("%s: the split-K kernels launched by route %d", what, r0);
				if (sk != (r0 == CAKE_GEMM_ROUTE_STREAMK || (r0 == CAKE_GEMM_ROUTE_PADDED && is_kernel(&ls, k0, "gemm_bf16_streamk"))))
					fail_msg("%s: the stream-K kernels launched by route %d", what, r0);
				if (skn != (r0 == CAKE_GEMM_ROUTE_STREAMK_128X128 ||
				            (r0 == CAKE_GEMM_ROUTE_PADDED && is_kernel(&ls, k0, "gemm_bf16_streamk128"))))
					fail_msg("%s: the 128x128 stream-K kernels launched by route %d", what, r0);
				const long long *d = vd.launch_dims[0];
				if (sk || skn) {   /* the plan covers every K step of the column blocks, no CTA empty */
					long long w = sk ? 256 : 128, ncol = d[1] / w * (d[2] / 64), ng = d[sk ? 4 : 7], ipc = d[sk ? 5 : 8];
					if (ipc < 1 || ng * ipc < ncol || (ng - 1) * ipc >= ncol || ng * (d[0] / 128) > 132 || d[6] != d[2] / 64)
						fail_msg("%s: stream-K (%lld wide) plan NG %lld, IPC %lld, KS %lld for %lld steps", what, w, ng, ipc, d[6], ncol);
				}
				if (r0 == CAKE_GEMM_ROUTE_PADDED) {   /* padded: the least tile multiples covering the shape */
					if (d[0] != ceil_to(M, 128) || d[2] != ceil_to(K, 64) ||
					    (d[1] != ceil_to(N, 128) && d[1] != ceil_to(N, 256)) || d[1] < N)
						fail_msg("%s: padded to %lldx%lldx%lld", what, d[0], d[1], d[2]);
					if (d[0] == M && d[1] == N && d[2] == K)
						fail_msg("%s: the padded route pads nothing", what);
					/* the padded shape itself is served directly, by exactly one guard */
					LibVerdict pv;
					lib_verdict(&ls, d, 0, &pv);
					check_guards(&pv, what);
					if (pv.route[0] == CAKE_GEMM_ROUTE_PADDED)
						fail_msg("%s: the padded shape takes the padded route again", what);
				} else if (d[0] != M || d[1] != N || d[2] != K) {
					fail_msg("%s: a direct route launched at %lldx%lldx%lld", what, d[0], d[1], d[2]);
				}
				for (int l = 0; l < vd.nlaunch; l++)
					check_launch(&ls, vd.launch_kid[l], vd.launch_dims[l], what);
			}
	print_message("gemm: %lld shapes served (persistent %lld, ws_128x256 %lld, persistent_128x128 %lld, split-K %lld, "
	              "ws_128x192 %lld, ws_64x128 %lld, stream-K %lld, stream-K 128x128 %lld, padded %lld), %lld refused\n", served,
	              hits[0], hits[1], hits[2], hits[3], hits[4], hits[5], hits[6], hits[7], hits[8], refused);
	for (int r = 0; r <= CAKE_GEMM_ROUTE_PADDED; r++)
		assert_true(hits[r] > 0);
	assert_true(refused > 0);
	sb_free(&err);
	lib_unload(&ls);
}

static void test_kmeans_grid(void **state)
{
	(void)state;
	LibSet ls;
	StrBuf err = {0};
	if (lib_load(&ls, lib_family("kmeans"), "kernels/kmeans", CAKE_DERIVE, NULL, &err))
		fail_msg("%s", sb_str(&err));
	static const long long Bs[] = {0, 1, 2, 32, 65535, 65536};
	static const long long Ds[] = {64, 96, 128};
	long long Ks[64], Ns[64];
	int nk = 0, nn = 0;
	static const long long km[] = {1, 2, 4, 8, 32, 40, 512};   /* x128 */
	nk = around(Ks, nk, km, 7, 128);
	static const long long kx[] = {0, 1, 2, 3, 100, 1000, 2048, 4095, 4096, 4097, 5000, 65536, 1048576, 1048577};
	for (size_t i = 0; i < NELEM(kx); i++)
		Ks[nk++] = kx[i];
	static const long long nmul[] = {1, 2, 64, 74};   /* x1024 */
	nn = around(Ns, nn, nmul, 4, 1024);
	static const long long nx[] = {1, 2, 3, 100, 127, 128, 129, 255, 256, 257, 5000, 16384, 75600, 1048576, 1048577};
	for (size_t i = 0; i < NELEM(nx); i++)
		Ns[nn++] = nx[i];
	long long ahits[6] = {0}, uhits[6] = {0}, served = 0, refused = 0;
	char what[160];
	for (size_t bi = 0; bi < NELEM(Bs); bi++)
		for (size_t di = 0; di < NELEM(Ds); di++)
			for (int ni = 0; ni < nn; ni++)
				for (int ki = 0; ki < nk; ki++)
					for (int f16 = 0; f16 < 2; f16++)
						for (int atomic = 0; atomic < 2; atomic++) {
							long long B = Bs[bi], D = Ds[di], N = Ns[ni], K = Ks[ki];
							/* N >= K, plus a slice of N < K (refused) */
							if (K > N && (N != 100 || atomic))
								continue;
							long long v[5] = {B, N, D, K, f16};
							snprintf(what, sizeof what, "kmeans B=%lld N=%lld D=%lld K=%lld %s %s", B, N, D, K,
							         f16 ? "f16" : "bf16", atomic ? "atomic" : "sorted");
							LibVerdict vd;
							lib_verdict(&ls, v, atomic, &vd);
							bool want = B >= 1 && B <= 65535 && K >= 1 && N >= K && (D == 64 || D == 128) &&
							            K <= 1048576 && N <= 2147482624;
							if (vd.in_domain != want)
								fail_msg("%s: in_domain %d, the domain says %d", what, vd.in_domain, want);
							if (!want) {
								assert_non_null(vd.failed);
								refused++;
								continue;
							}
							served++;
							check_guards(&vd, what);
							ahits[vd.route[0]]++;
							uhits[vd.route[1]]++;
							long long kmin = 256;   /* the 2-stage assigns' smallest K */
							long long Np = ceil_to(N, 1024), Kp = ceil_to(K, 128) < kmin ? kmin : ceil_to(K, 128);
							/* D = 128: the 4-stage assigns (routes 0, 2) from Kp = 512, the 2-stage ones (1, 3) below */
							if (D == 128 && (vd.route[0] == 0 || vd.route[0] == 2) != (Kp >= 512))
								fail_msg("%s: assign route %d at Kp = %lld", what, vd.route[0], Kp);
							if (atomic != (vd.route[1] == 5))
								fail_msg("%s: update route %d", what, vd.route[1]);
							if (vd.route[1] <= 3 && Kp > 4096)
								fail_msg("%s: a shared-memory histogram route for Kp = %lld", what, Kp);
							if (vd.nlaunch < 3)
								fail_msg("%s: %d launches", what, vd.nlaunch);
							for (int l = 0; l < vd.nlaunch; l++) {
								const long long *d = vd.launch_dims[l];
								if (d[0] != B || d[1] != Np || d[2] != Kp)
									fail_msg("%s: launched at B=%lld N=%lld K=%lld, expected N=%lld K=%lld", what, d[0],
									         d[1], d[2], Np, Kp);
								check_launch(&ls, vd.launch_kid[l], d, what);
							}
						}
	print_message("kmeans: %lld shapes served (assign %lld/%lld/%lld/%lld/%lld/%lld; update k256 %lld, k1024 %lld, "
	              "k4096 %lld, any-K %lld, global %lld, atomic %lld), %lld refused\n", served, ahits[0], ahits[1], ahits[2],
	              ahits[3], ahits[4], ahits[5], uhits[0], uhits[1], uhits[2], uhits[3], uhits[4], uhits[5], refused);
	for (int r = 0; r < 6; r++)
		assert_true(ahits[r] > 0);
	for (int r = 0; r < 6; r++)
		assert_true(uhits[r] > 0);
	assert_true(refused > 0);
	sb_free(&err);
	lib_unload(&ls);
}

static void test_explain_text(void **state)
{
	(void)state;
	LibSet ls;
	StrBuf err = {0}, out = {0};
	assert_int_equal(lib_load(&ls, lib_family("gemm"), "kernels/gemm", CAKE_DERIVE, NULL, &err), 0);
	long long v[3] = {1000, 4096, 4096};
	assert_int_equal(lib_explain(&ls, v, 0, &out), CAKE_GEMM_ROUTE_PADDED);
	assert_non_null(strstr(sb_str(&out), "route: padded"));
	assert_non_null(strstr(sb_str(&out), "M 1000 -> 1024"));
	assert_non_null(strstr(sb_str(&out), "then ws_128x256_s3"));
	assert_non_null(strstr(sb_str(&out), "A in place"));
	sb_free(&out);
	long long bad[3] = {64, 64, 12};
	assert_true(lib_explain(&ls, bad, 0, &out) < 0);
	assert_non_null(strstr(sb_str(&out), "'K % 8 == 0' is false"));
	sb_free(&out);
	assert_int_equal(lib_route_line(&ls, v, 0, &out), CAKE_GEMM_ROUTE_PADDED);
	assert_string_equal(sb_str(&out), "padded>ws_128x256_s3 1024x4096x4096");
	sb_free(&out);
	lib_unload(&ls);
	sb_free(&err);
}

static void test_parse_shape(void **state)
{
	(void)state;
	long long v[8];
	int atomic;
	char e[256];
	const LibFamily *g = lib_family("gemm"), *k = lib_family("kmeans");
	assert_true(lib_parse_shape(g, "M=1,N=2,K=8", v, &atomic, e, sizeof e));
	assert_true(v[0] == 1 && v[1] == 2 && v[2] == 8);
	assert_false(lib_parse_shape(g, "M=1,N=2", v, &atomic, e, sizeof e));
	assert_non_null(strstr(e, "no K"));
	assert_false(lib_parse_shape(g, "M=1,N=2,K=x", v, &atomic, e, sizeof e));
	assert_false(lib_parse_shape(g, "Q=1", v, &atomic, e, sizeof e));
	assert_true(lib_parse_shape(k, "B=2,N=100,D=64,K=10,dtype=f16,update=atomic", v, &atomic, e, sizeof e));
	assert_true(v[0] == 2 && v[1] == 100 && v[2] == 64 && v[3] == 10 && v[4] == 1 && atomic == 1);
	assert_false(lib_parse_shape(k, "B=2,N=100,D=64,K=10,dtype=f32", v, &atomic, e, sizeof e));
	assert_null(lib_family("conv"));
}

static void test_domain_clauses(void **state)
{
	(void)state;
	static const char *const vars[] = {"M", "N", "K"};
	LibConds c;
	char e[256];
	assert_true(lib_conds_parse(&c, "# LLM layers only\nM % 16 == 0, K <= 8192\n(N >= 256 && N % 128 == 0) || N == 64\n",
	                            vars, 3, e, sizeof e));
	assert_int_equal(c.n, 3);
	const char *f = NULL;
	long long ok[3] = {32, 256, 4096}, bad1[3] = {33, 256, 4096}, bad2[3] = {32, 200, 4096};
	assert_true(lib_conds_eval(&c, ok, &f));
	assert_false(lib_conds_eval(&c, bad1, &f));
	assert_string_equal(f, "M % 16 == 0");
	assert_false(lib_conds_eval(&c, bad2, &f));
	assert_string_equal(f, "(N >= 256 && N % 128 == 0) || N == 64");
	/* a product that overflows makes the clause false, never wraps */
	LibConds o;
	assert_true(lib_conds_parse(&o, "M * N * K * 9007199254740991 > 0", vars, 3, e, sizeof e));
	long long big[3] = {1 << 20, 1 << 20, 1 << 20};
	assert_false(lib_conds_eval(&o, big, &f));
	lib_conds_free(&o);
	/* refused clauses */
	static const char *const badtext[] = {"M % N == 0", "Q > 1", "M >", "M / 0 == 1", "(M > 1", "M > 1 )", "M >= 99999999999999999999"};
	for (size_t i = 0; i < NELEM(badtext); i++) {
		LibConds b;
		if (lib_conds_parse(&b, badtext[i], vars, 3, e, sizeof e))
			fail_msg("'%s' was accepted", badtext[i]);
		assert_non_null(strstr(e, "line 1"));
	}
	/* the clauses narrow the gemm domain without opening a gap */
	LibSet ls;
	StrBuf err = {0};
	assert_int_equal(lib_load(&ls, lib_family("gemm"), "kernels/gemm", CAKE_DERIVE, &c, &err), 0);
	for (long long M = 1; M <= 300; M += 13)
		for (long long K = 8; K <= 9000; K += 1000) {
			long long v[3] = {M, 256, K};
			LibVerdict vd;
			lib_verdict(&ls, v, 0, &vd);
			assert_int_equal(vd.in_domain, M % 16 == 0 && K <= 8192);
			if (vd.in_domain)
				check_guards(&vd, "narrowed gemm");
			else
				assert_non_null(vd.failed);
		}
	StrBuf out = {0};
	long long v[3] = {17, 256, 64};
	assert_true(lib_explain(&ls, v, 0, &out) < 0);
	assert_non_null(strstr(sb_str(&out), "'M % 16 == 0' is false: a clause of the domain file"));
	sb_free(&out);
	lib_unload(&ls);
	sb_free(&err);
	lib_conds_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_grid),
		cmocka_unit_test(test_kmeans_grid),
		cmocka_unit_test(test_explain_text),
		cmocka_unit_test(test_parse_shape),
		cmocka_unit_test(test_domain_clauses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
