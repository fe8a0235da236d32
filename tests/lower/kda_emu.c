/*
 * kda_emu.c — inputs for, and the float64 check of, a KDA kernel run on the CPU
 * emulator (tools/emu/simt_emu.h; tests/lower/emu.sh drives it).
 *
 *   kda_emu gen   DIR B T H N VARLEN LB BF16 SEED [DECODE [kv]]   write DIR/NAME.bin for every parameter
 *   kda_emu check DIR B T H N VARLEN LB BF16 SEED DECODE [kv]     compare DIR/O.out, DIR/SN.out
 *
 * N sequences: B of T tokens, or (VARLEN = 1, B = 1) N packed ones of seeded
 * lengths summing to T; LB 0 is the softplus gate, any other value the lower
 * bound of the lower-bound gate; BF16 1 for a bf16 state. Inputs are the app's
 * generators (src/family/kda.h); O and SN start as NaN poison, so an element
 * the kernel never writes fails. The check is kda_check on every (sequence,
 * head) pair with the kda_decode (DECODE = 1) or kda tolerance. With `kv` the inputs
 * take the names of tests/corpus/good/kda_prefill_chunk.cake (Qin, Kin, Vin, Gin, Bin)
 * and the states are K-first, [N, H, K, V].
 * With VARLEN = 1, KDA_EMU_SEQLENS=L1,L2,... (summing to T, N of them) sets the lengths.
 * gen also writes the chunk-slot tables of the split prefill (Sl, Cs, Ord, Ps:
 * kda_slot_tables) when T >= 64, and DIR/slots.txt = "NS NP", the dims that go with them.
 */
#include "family/kda.h"
#include "family/oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *put(const char *dir, const char *name, size_t bytes, void *data)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s.bin", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, bytes, f) != bytes) {
		fprintf(stderr, "kda_emu: cannot write %s\n", p);
		exit(2);
	}
	fclose(f);
	return data;
}

static void *get(const char *dir, const char *name, size_t bytes)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	void *d = malloc(bytes);
	if (!f || !d || fread(d, 1, bytes, f) != bytes) {
		fprintf(stderr, "kda_emu: cannot read %s (%zu bytes)\n", p, bytes);
		exit(2);
	}
	fclose(f);
	return d;
}

int main(int argc, char **argv)
{
	if (argc < 11) {
		fprintf(stderr, "usage: kda_emu gen|check DIR B T H N VARLEN LB BF16 SEED [DECODE]\n");
		return 2;
	}
	const char *dir = argv[2];
	long long B = atoll(argv[3]), T = atoll(argv[4]), H = atoll(argv[5]), N = atoll(argv[6]), K = 128, V = 128;
	int varlen = atoi(argv[7]), bf16 = atoi(argv[9]);
	double lb = atof(argv[8]);
	uint64_t seed = strtoull(argv[10], NULL, 10);
	bool gen = !strcmp(argv[1], "gen");
	bool kv = argc > 12 && !strcmp(argv[12], "kv");   /* the chunked sketch's names and state layout */
	size_t nk = (size_t)(B * T * H * K), nv = (size_t)(B * T * H * V), ns = (size_t)(N * H * K * V), es = bf16 ? 2 : 4;
	/* inputs: generated (gen) or regenerated identically (check) */
	uint16_t *q = malloc(2 * nk), *k = malloc(2 * nk), *g = malloc(2 * nk), *v = malloc(2 * nv), *be = malloc(2 * (size_t)(B * T * H));
	float *al = malloc(4 * (size_t)H), *dt = malloc(4 * (size_t)(H * K));
	void *s0 = malloc(ns * es);
	int64_t *cu = varlen ? malloc(sizeof(int64_t) * (size_t)(N + 1)) : NULL;
	oracle_fill_bf16(q, nk, seed);
	oracle_fill_bf16(k, nk, seed + 1);
	oracle_fill_bf16(g, nk, seed + 2);
	oracle_fill_bf16(v, nv, seed + 3);
	oracle_fill_bf16(be, (size_t)(B * T * H), seed + 4);
	kda_fill_gate_params(al, dt, H, K, seed + 5);
	uint64_t st = seed + 6;
	for (size_t i = 0; i < ns; i++) {
		float x = (float)((double)(oracle_splitmix64(&st) >> 11) / (double)(1ull << 53) * 2 - 1);
		if (bf16)
			((uint16_t *)s0)[i] = oracle_f32_to_bf16(x);
		else
			((float *)s0)[i] = x;
	}
	if (cu) {
		kda_segments(N, T, seed + 7, cu);
		const char *ls = getenv("KDA_EMU_SEQLENS");
		for (long long i = 0; ls && *ls && i < N; i++) {
			char *end;
			cu[i + 1] = cu[i] + strtoll(ls, &end, 10);
			ls = *end == ',' ? end + 1 : end;
		}
		if (cu[N] != T) {
			fprintf(stderr, "kda_emu: KDA_EMU_SEQLENS must hold N = %lld lengths summing to T = %lld\n", N, T);
			return 2;
		}
	}
	KdaProblem p = {.B = B, .T = T, .H = H, .K = K, .V = V, .N = N, .cu = cu, .packed = cu != NULL,
	                .gate = lb != 0 ? KDA_GATE_LOWER_BOUND : KDA_GATE_SOFTPLUS, .lower_bound = lb, .state_bf16 = bf16 != 0, .state_kv = kv,
	                .q = q, .k = k, .v = v, .g = g, .beta = be, .alog = al, .dtb = dt, .s0 = s0};
	int rc = 0;
	if (gen) {
		put(dir, kv ? "Qin" : "Q", 2 * nk, q), put(dir, kv ? "Kin" : "K", 2 * nk, k), put(dir, kv ? "Gin" : "G", 2 * nk, g);
		put(dir, kv ? "Vin" : "V", 2 * nv, v), put(dir, kv ? "Bin" : "Beta", 2 * (size_t)(B * T * H), be);
		put(dir, "Alog", 4 * (size_t)H, al), put(dir, "Dtb", 4 * (size_t)(H * K), dt);
		put(dir, "S0", ns * es, s0);
		if (cu)
			put(dir, "Cu", sizeof(int64_t) * (size_t)(N + 1), cu);
		KdaSlots sl;
		if (kda_slot_tables(&p, &sl)) {
			put(dir, "Sl", sizeof(int32_t) * (size_t)sl.ns * KDA_SLOT_FIELDS, sl.sl);
			put(dir, "Cs", sizeof(int32_t) * (size_t)(N + 1), sl.cs);
			put(dir, "Ord", sizeof(int32_t) * (size_t)N, sl.ord);
			put(dir, "Ps", sizeof(int32_t) * (size_t)sl.np, sl.ps);
			char pth[1024];
			snprintf(pth, sizeof pth, "%s/slots.txt", dir);
			FILE *f = fopen(pth, "w");
			if (!f || fprintf(f, "%lld %lld\n", sl.ns, sl.np) < 0 || fclose(f)) {
				fprintf(stderr, "kda_emu: cannot write %s\n", pth);
				return 2;
			}
			kda_slots_free(&sl);
		}
		void *poison = malloc(ns * es > 2 * nv ? ns * es : 2 * nv);
		memset(poison, 0xff, ns * es > 2 * nv ? ns * es : 2 * nv);
		put(dir, "SN", ns * es, poison);
		put(dir, "O", 2 * nv, poison);
		free(poison);
	} else {
		int decode = argc > 11 ? atoi(argv[11]) : 0;
		uint16_t *o = get(dir, "O.out", 2 * nv);
		void *sn = get(dir, "SN.out", ns * es);
		int np;
		long long *pairs = kda_sample_pairs(&p, 1 << 20, 1e15, seed, &np);
		const KdaTol *tol = !decode ? &KDA_TOL_PREFILL : bf16 ? &KDA_TOL_DECODE_BF16 : &KDA_TOL_DECODE;
		KdaCheck c;
		rc = kda_check(&p, o, sn, pairs, np, tol, 2, &c);
		printf("%lld pairs: o rel err %.3e (tol %.1e), state rel err %.3e (tol %.1e), %lld NaN in O, %lld in SN, %lld bad%s\n", c.heads,
		       c.o_rel, tol->o, c.s_rel, tol->state, c.o_nan, c.s_nan, c.bad, rc ? " FAIL" : "");
		free(pairs), free(o), free(sn);
	}
	free(q), free(k), free(g), free(v), free(be), free(al), free(dt), free(s0), free(cu);
	return rc ? 1 : 0;
}
