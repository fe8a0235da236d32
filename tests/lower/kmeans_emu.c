/*
 * kmeans_emu.c — inputs for, and the CPU references of, one k-means centroid update run on
 * the emulator stage by stage (tests/lower/kmeans_emu.sh drives it; tests/lower/kmeans_run.cpp
 * runs the kernels).
 *
 *   kmeans_emu gen   DIR B N D K F16 SEED Np Kp UPDATE             write DIR/NAME.bin
 *   kmeans_emu check DIR B N D K F16 SEED Np Kp UPDATE KERNEL...   check every stage
 *
 * The problem is the library's (src/lib/rt/kmeans_api.inc, cake_kmeans_update): B batches of N
 * points in D dimensions, K clusters, 16-bit data (F16 1 for f16), padded as the library pads
 * (Np and Kp are what `cake library kmeans --explain` says): the points are copied into
 * X [B, Np, D] with zero rows after N, the labels into Assign [B, Np] with -1 after N, the old
 * centroids into Cent [B, Kp, D] with zero rows after K. Counts starts at zero (the library
 * clears it), and so does Sums for the atomic update (UPDATE atomic) and for the split segment
 * sums (UPDATE split: the route runs kmeans_segsum_split*); every other output
 * (Offsets, Cursor, Order, Sums, NewCent, Cnorm, Shift) starts as NaN bits, which are also an
 * absurd index, so an element a kernel never writes fails its check.
 *
 * The labels of each batch are seeded: one heavy cluster takes about 60% of the points, about
 * one cluster in 8 (and at least one when K >= 2) receives none, the rest are uniform over the
 * others, and about 1% are outside [0, K): -1, -2, INT_MIN, 2^30, Kp and a few just above it
 * (below 4096, inside the shared count array of kmeans_hist / kmeans_fill), and when K is
 * padded some in [K, Kp) (padding clusters: the kernels count them, the caller never sees
 * them). cake_kmeans_update's contract is that labels outside [0, K) count nowhere.
 *
 * check regenerates the inputs and walks the kernels in the order given (the route's launch
 * order). After kernel i it reads each buffer's latest version (DIR/NAME.j.out for the largest
 * j <= i that kmeans_run wrote, else DIR/NAME.bin) and checks what that kernel is for, against
 * references computed from the labels alone, at the padded shape the kernels see:
 *   kmeans_hist*    Counts = the number of labels c in [0, Kp), exactly;
 *   kmeans_scan*    Offsets = the exclusive prefix sum of those counts, Cursor = Offsets;
 *   kmeans_fill*    Cursor = Offsets + counts (every reservation made once), and each segment
 *                   Order[Offsets[c] .. + counts[c]) holds exactly the points labelled c (in any
 *                   order), with the slots past the last segment never written;
 *   kmeans_segsum*  Sums = the float64 segment sums within an f32 running sum's bound
 *                   (oracle_kmeans_segsum_check), zeros for empty clusters;
 *   kmeans_scatter* the same for the atomic scatter's Sums (and its Counts, exactly);
 *   kmeans_divide*  NewCent, Cnorm and Shift from the kernels' own Sums and Counts
 *                   (oracle_kmeans_divide_check), then end to end: NewCent against the float64
 *                   mean of each cluster's points from the labels (oracle_kmeans_update and
 *                   _check; empty clusters keep the old centroid bit for bit), at the padded
 *                   shape (every padding centroid stays zero) and at the caller's (N, K).
 * Prints one line; exits 0 when every stage passes, 1 when one fails, 2 on a usage error.
 */
#include "family/oracle.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON32 0x7fc00000u

static long long B, N, D, K, Np, Kp;
static int f16;
static uint64_t seed;
static const char *dir;

static void put(const char *name, size_t bytes, const void *data)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s.bin", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f)) {
		fprintf(stderr, "kmeans_emu: cannot write %s\n", p);
		exit(2);
	}
}

/* The latest version of buffer name after step `step` (-1: the input). */
static void *latest(const char *name, int step, size_t bytes)
{
	char p[1024];
	FILE *f = NULL;
	for (int j = step; j >= 0 && !f; j--) {
		snprintf(p, sizeof p, "%s/%s.%d.out", dir, name, j);
		f = fopen(p, "rb");
	}
	if (!f) {
		snprintf(p, sizeof p, "%s/%s.bin", dir, name);
		f = fopen(p, "rb");
	}
	void *d = malloc(bytes ? bytes : 1);
	if (!f || !d || fread(d, 1, bytes, f) != bytes) {
		fprintf(stderr, "kmeans_emu: cannot read %s (%zu bytes)\n", p, bytes);
		exit(2);
	}
	fclose(f);
	return d;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "kmeans_emu: out of memory (%zu bytes)\n", n);
		exit(2);
	}
	return p;
}

/* The inputs: points X [B, N, D], labels [B, N], old centroids [B, K, D] (unpadded). */
static void make_inputs(uint16_t *X, int32_t *lab, uint16_t *C)
{
	size_t nx = (size_t)(B * N * D), nc = (size_t)(B * K * D);
	oracle_fill_bf16(X, nx, seed);
	oracle_fill_bf16(C, nc, seed + 1);
	if (f16) {   /* the same values as f16 (exact: bf16 in [-1, 1] has fewer mantissa bits) */
		for (size_t i = 0; i < nx; i++)
			X[i] = oracle_f32_to_f16(oracle_bf16_to_f32(X[i]));
		for (size_t i = 0; i < nc; i++)
			C[i] = oracle_f32_to_f16(oracle_bf16_to_f32(C[i]));
	}
	int *live = xmalloc(sizeof(int) * (size_t)K);
	for (long long b = 0; b < B; b++) {
		uint64_t st = seed * 1000003ull + (uint64_t)b * 7919ull + 17;
		long long heavy = (long long)(oracle_splitmix64(&st) % (uint64_t)K);
		long long forced = K >= 2 ? (heavy + 1 + (long long)(oracle_splitmix64(&st) % (uint64_t)(K - 1))) % K : -1;
		int nlive = 0;
		for (long long c = 0; c < K; c++)
			if (c == heavy || (c != forced && oracle_splitmix64(&st) % 8 != 0))
				live[nlive++] = (int)c;
		for (long long i = 0; i < N; i++) {
			uint64_t r = oracle_splitmix64(&st) % 1000;
			int32_t l;
			if (r < 10) {
				long long oor[8] = {-1, -2, INT_MIN, 1 << 30, Kp, Kp + 1 + (long long)(oracle_splitmix64(&st) % 7),
				                    Kp + 3, K + (long long)(oracle_splitmix64(&st) % (uint64_t)(Kp - K + 1))};
				l = (int32_t)oor[oracle_splitmix64(&st) % (Kp > K ? 8 : 7)];
			} else if (r < 610) {
				l = (int32_t)heavy;
			} else {
				l = live[oracle_splitmix64(&st) % (uint64_t)nlive];
			}
			lab[b * N + i] = l;
		}
	}
	free(live);
}

/* The padded problem the kernels see. */
static void pad(const uint16_t *X, const int32_t *lab, const uint16_t *C, uint16_t *Xp, int32_t *labp, uint16_t *Cp)
{
	memset(Xp, 0, sizeof(uint16_t) * (size_t)(B * Np * D));
	memset(Cp, 0, sizeof(uint16_t) * (size_t)(B * Kp * D));
	for (long long b = 0; b < B; b++) {
		memcpy(Xp + b * Np * D, X + b * N * D, sizeof(uint16_t) * (size_t)(N * D));
		memcpy(Cp + b * Kp * D, C + b * K * D, sizeof(uint16_t) * (size_t)(K * D));
		for (long long i = 0; i < Np; i++)
			labp[b * Np + i] = i < N ? lab[b * N + i] : -1;
	}
}

static int report(const char *stage, long long bad, const char *detail)
{
	printf("%s %s%lld bad%s%s", stage, bad < 0 ? "malformed " : "", bad < 0 ? 0 : bad, detail[0] ? " " : "", detail);
	return bad != 0;
}

int main(int argc, char **argv)
{
	if (argc < 12) {
		fprintf(stderr, "usage: kmeans_emu gen|check DIR B N D K F16 SEED Np Kp UPDATE [KERNEL...]\n");
		return 2;
	}
	dir = argv[2];
	B = atoll(argv[3]), N = atoll(argv[4]), D = atoll(argv[5]), K = atoll(argv[6]);
	f16 = atoi(argv[7]);
	seed = strtoull(argv[8], NULL, 10);
	Np = atoll(argv[9]), Kp = atoll(argv[10]);
	int atomic = !strcmp(argv[11], "atomic");
	if (B < 1 || K < 1 || N < K || Np < N || Kp < K || (D != 64 && D != 128)) {
		fprintf(stderr, "kmeans_emu: a shape outside the library's domain\n");
		return 2;
	}
	size_t nx = (size_t)(B * Np * D), nk = (size_t)(B * Kp), nkd = nk * (size_t)D, nn = (size_t)(B * Np);
	uint16_t *X = xmalloc(2 * (size_t)(B * N * D)), *C = xmalloc(2 * (size_t)(B * K * D));
	int32_t *lab = xmalloc(4 * (size_t)(B * N));
	uint16_t *Xp = xmalloc(2 * nx), *Cp = xmalloc(2 * nkd);
	int32_t *labp = xmalloc(4 * nn);
	make_inputs(X, lab, C);
	pad(X, lab, C, Xp, labp, Cp);
	if (!strcmp(argv[1], "gen")) {
		uint32_t *p32 = xmalloc(4 * (nkd > nn ? nkd : nn));
		uint16_t *p16 = xmalloc(2 * nkd);
		for (size_t i = 0; i < (nkd > nn ? nkd : nn); i++)
			p32[i] = POISON32;
		for (size_t i = 0; i < nkd; i++)
			p16[i] = f16 ? 0x7e00 : 0x7fc0;
		put("X", 2 * nx, Xp), put("Assign", 4 * nn, labp), put("Cent", 2 * nkd, Cp);
		int32_t *zero = calloc(nkd, 4);
		put("Counts", 4 * nk, zero);
		put("Sums", 4 * nkd, atomic || !strcmp(argv[11], "split") ? (void *)zero : (void *)p32);
		put("Offsets", 4 * nk, p32), put("Cursor", 4 * nk, p32), put("Order", 4 * nn, p32);
		put("NewCent", 2 * nkd, p16), put("Cnorm", 4 * nk, p32), put("Shift", 4 * nk, p32);
		free(zero), free(p32), free(p16);
		free(X), free(C), free(lab), free(Xp), free(Cp), free(labp);
		return 0;
	}
	if (strcmp(argv[1], "check")) {
		fprintf(stderr, "kmeans_emu: gen or check\n");
		return 2;
	}
	/* references at the padded shape: counts, exclusive offsets, a counting-sort order */
	int32_t *cnt = calloc(nk, 4), *off = xmalloc(4 * nk), *rorder = xmalloc(4 * nn), *next = xmalloc(4 * nk);
	long long *placed = calloc((size_t)B, sizeof(long long));
	for (long long b = 0; b < B; b++) {
		for (long long i = 0; i < Np; i++) {
			int32_t l = labp[b * Np + i];
			if (l >= 0 && l < Kp)
				cnt[b * Kp + l]++;
		}
		int32_t run = 0;
		for (long long c = 0; c < Kp; c++) {
			off[b * Kp + c] = next[b * Kp + c] = run;
			run += cnt[b * Kp + c];
		}
		placed[b] = run;
		for (long long i = 0; i < Np; i++) {
			int32_t l = labp[b * Np + i];
			if (l >= 0 && l < Kp)
				rorder[b * Np + next[b * Kp + l]++] = (int32_t)i;
		}
	}
	long long total_bad = 0;
	int fail = 0;
	char det[256];
	unsigned char *seen = xmalloc((size_t)Np);
	printf("B=%lld N=%lld->%lld D=%lld K=%lld->%lld %s:", B, N, Np, D, K, Kp, f16 ? "f16" : "bf16");
	for (int s = 0; 12 + s < argc; s++) {
		const char *kn = argv[12 + s];
		long long bad = 0;
		det[0] = 0;
		printf(s ? "; " : " ");
		if (!strncmp(kn, "kmeans_hist", 11) || !strncmp(kn, "kmeans_scatter", 14)) {
			int32_t *kc = latest("Counts", s, 4 * nk);
			for (size_t i = 0; i < nk; i++)
				bad += kc[i] != cnt[i];
			free(kc);
		}
		if (!strncmp(kn, "kmeans_hist", 11)) {
			fail |= report("hist", bad, "");
		} else if (!strncmp(kn, "kmeans_scan", 11)) {
			int32_t *ko = latest("Offsets", s, 4 * nk), *ku = latest("Cursor", s, 4 * nk);
			for (size_t i = 0; i < nk; i++)
				bad += (ko[i] != off[i]) + (ku[i] != off[i]);
			free(ko), free(ku);
			fail |= report("scan", bad, "");
		} else if (!strncmp(kn, "kmeans_fill", 11)) {
			int32_t *ku = latest("Cursor", s, 4 * nk), *ko = latest("Order", s, 4 * nn);
			long long wrong_cursor = 0, misplaced = 0, stray = 0;
			for (size_t i = 0; i < nk; i++)
				wrong_cursor += ku[i] != off[i] + cnt[i];
			for (long long b = 0; b < B; b++) {
				memset(seen, 0, (size_t)Np);
				for (long long c = 0; c < Kp; c++)
					for (long long t = off[b * Kp + c]; t < off[b * Kp + c] + cnt[b * Kp + c]; t++) {
						int32_t id = ko[b * Np + t];
						bool ok = id >= 0 && id < Np && !seen[id] && labp[b * Np + id] == c;
						if (ok)
							seen[id] = 1;
						misplaced += !ok;
					}
				for (long long t = placed[b]; t < Np; t++)
					stray += (uint32_t)ko[b * Np + t] != POISON32;
			}
			free(ku), free(ko);
			bad = wrong_cursor + misplaced + stray;
			snprintf(det, sizeof det, "(%lld cursors, %lld misplaced ids, %lld writes past the segments)", wrong_cursor, misplaced,
			         stray);
			fail |= report("fill", bad, bad ? det : "");
		} else if (!strncmp(kn, "kmeans_segsum", 13) || !strncmp(kn, "kmeans_scatter", 14)) {
			bool sc = !strncmp(kn, "kmeans_scatter", 14);
			long long cbad = bad;
			float *ks = latest("Sums", s, 4 * nkd);
			int32_t *ko = sc ? rorder : latest("Order", s, 4 * nn);
			double rel = 0;
			long long empty = 0, nan = 0;
			bad = 0;
			for (long long b = 0; b < B && bad >= 0; b++) {
				KmeansUpdateCheck r;
				long long e = oracle_kmeans_segsum_check(Xp + b * Np * D, f16 != 0, Np, (int)D, (int)Kp, ko + b * Np, off + b * Kp,
				                                         cnt + b * Kp, ks + b * Kp * D, &r);
				bad = e < 0 ? e : bad + e;
				rel = r.rel_err > rel || isnan(r.rel_err) ? r.rel_err : rel;
				empty += r.empty, nan += r.n_nan;
			}
			if (bad >= 0)
				bad += cbad;
			snprintf(det, sizeof det, "(rel err %.2e, %lld NaN, %lld empty%s)", rel, nan, empty, sc && cbad ? ", wrong counts" : "");
			fail |= report(sc ? "scatter" : "segsum", bad, det);
			free(ks);
			if (!sc)
				free(ko);
		} else if (!strncmp(kn, "kmeans_divide", 13)) {
			float *ks = latest("Sums", s, 4 * nkd), *kn2 = latest("Cnorm", s, 4 * nk), *ksh = latest("Shift", s, 4 * nk);
			int32_t *kc = latest("Counts", s, 4 * nk);
			uint16_t *kcent = latest("NewCent", s, 2 * nkd);
			long long nb = 0, sb = 0, ebad = 0, empty = 0, eu = 0, fb = -1, fbb = 0;
			double fo = 0, fr = 0;
			double *ref = xmalloc(sizeof(double) * (size_t)(Kp * D)), *am = xmalloc(sizeof(double) * (size_t)(Kp * D));
			long long *rc = xmalloc(sizeof(long long) * (size_t)Kp);
			for (long long b = 0; b < B; b++) {
				KmeansUpdateCheck r;
				long long e = oracle_kmeans_divide_check(ks + b * Kp * D, kc + b * Kp, Cp + b * Kp * D, f16 != 0, (int)Kp, (int)D,
				                                         kcent + b * Kp * D, kn2 + b * Kp, ksh + b * Kp, ORACLE_KMEANS_TOL, &r);
				bad += e < 0 ? 1 : e;
				nb += r.norm_bad, sb += r.shift_bad;
				if (fb < 0 && r.first_bad >= 0)
					fb = r.first_bad, fbb = b, fo = r.first_bad_out, fr = r.first_bad_ref;
				/* end to end at the padded shape: every centroid, padding ones included */
				oracle_kmeans_update(Xp + b * Np * D, f16 != 0, labp + b * Np, (int)Np, (int)D, (int)Kp, Cp + b * Kp * D, ref, rc, am);
				ebad += oracle_kmeans_update_check(kcent + b * Kp * D, f16 != 0, ref, am, rc, Cp + b * Kp * D, (int)Kp, (int)D,
				                                   ORACLE_KMEANS_TOL, &r);
				if (fb < 0 && r.first_bad >= 0)
					fb = r.first_bad, fbb = b, fo = r.first_bad_out, fr = r.first_bad_ref;
				/* and the caller's problem: N points, K clusters, labels outside [0, K) nowhere */
				oracle_kmeans_update(X + b * N * D, f16 != 0, lab + b * N, (int)N, (int)D, (int)K, C + b * K * D, ref, rc, am);
				eu += oracle_kmeans_update_check(kcent + b * Kp * D, f16 != 0, ref, am, rc, C + b * K * D, (int)K, (int)D,
				                                 ORACLE_KMEANS_TOL, &r);
				empty += r.empty;
			}
			int w = snprintf(det, sizeof det, "(%lld norms, %lld shifts", nb, sb);
			if (fb >= 0)
				w += snprintf(det + w, sizeof det - (size_t)w, "; first: batch %lld cluster %lld (count %d) dim %lld: %g, want %g",
				              fbb, fb / D, kc[fbb * Kp + fb / D], fb % D, fo, fr);
			snprintf(det + w, sizeof det - (size_t)w, "); end to end %lld bad at Kp, %lld at K (%lld empty clusters)", ebad, eu,
			         empty);
			bad += ebad + eu;
			fail |= report("divide", bad, det);
			free(ks), free(kn2), free(ksh), free(kc), free(kcent), free(ref), free(am), free(rc);
		} else {
			printf("%s: no check for this kernel", kn);
			fail = 1;
		}
		total_bad += bad;
	}
	printf("%s\n", fail ? " FAIL" : "");
	free(X), free(C), free(lab), free(Xp), free(Cp), free(labp), free(cnt), free(off), free(rorder), free(next), free(placed),
	    free(seen);
	return fail ? 1 : 0;
}
