/*
 * kmeans_run.cpp — run a chain of emulated kernels over shared buffers, the way a library
 * route launches them (tests/lower/kmeans_emu.sh drives it).
 *
 *   kmeans_run DIR NAME=VALUE... -- KERNEL...
 *
 * Every DIR/NAME.bin is loaded into its own 256-byte aligned buffer (the alignment the
 * library's workspace carve gives), the kernels run one after another on the CPU emulator
 * (tools/emu/simt_emu.h), each found by name in the registry that the units made by
 * `mkdriver.py --unit` fill, with every buffer and every NAME=VALUE bound by parameter name —
 * as kmeans_api.inc binds a route's buffers (X, Assign, Counts, Offsets, Cursor, Order, Sums,
 * Cent, NewCent, Cnorm, Shift) and rt_launch its dims. After kernel i, each pointer argument
 * of it whose bytes changed is written to DIR/NAME.i.out, so the checker
 * (tests/lower/kmeans_emu.c) can check every stage of the route, not only the last. Prints
 * one line per kernel with its emulated time. Each buffer ends where an inaccessible page
 * begins (its size rounded up to 256 bytes), so a kernel that reads or writes past the end of
 * a tensor faults instead of passing on neighbouring bytes. Exits 1 when a kernel is unknown or its
 * emulation fails (a deadlock, a refused tensor map), 2 on a usage or I/O error.
 */
#include "simt_emu.h"

#include <chrono>
#include <dirent.h>
#include <map>
#include <string>

struct Buf {
	void *p = nullptr;
	size_t n = 0;
	uint64_t hash = 0;
};

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* n bytes, 256-byte aligned, ending at most 255 bytes before a PROT_NONE page */
static void *guarded(size_t n)
{
	size_t total = (n + 255) / 256 * 256, pages = (total + 4095) / 4096 * 4096;
	if (!total)
		total = 256, pages = 4096;
	char *m = (char *)mmap(nullptr, pages + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return nullptr;
	mprotect(m + pages, 4096, PROT_NONE);
	return m + pages - total;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: kmeans_run DIR NAME=VALUE... -- KERNEL...\n");
		return 2;
	}
	std::string dir = argv[1];
	EmuArgs a;
	std::map<std::string, Buf> bufs;
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		const char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "kmeans_run: '%s' is not NAME=VALUE\n", argv[i]);
			return 2;
		}
		static std::string names[EmuArgs::MAX];
		names[a.nv] = std::string(argv[i], (size_t)(eq - argv[i]));
		a.set(names[a.nv].c_str(), atof(eq + 1));
	}
	if (i == argc) {
		fprintf(stderr, "kmeans_run: no kernels (after --)\n");
		return 2;
	}
	DIR *d = opendir(dir.c_str());
	if (!d) {
		fprintf(stderr, "kmeans_run: cannot open %s\n", dir.c_str());
		return 2;
	}
	for (struct dirent *e; (e = readdir(d));) {
		std::string f = e->d_name;
		if (f.size() < 5 || f.compare(f.size() - 4, 4, ".bin"))
			continue;
		std::string nm = f.substr(0, f.size() - 4);
		FILE *fp = fopen((dir + "/" + f).c_str(), "rb");
		if (!fp)
			return 2;
		fseek(fp, 0, SEEK_END);
		long sz = ftell(fp);
		fseek(fp, 0, SEEK_SET);
		Buf &b = bufs[nm];
		b.n = (size_t)sz;
		b.p = guarded((size_t)sz);
		if (!b.p || fread(b.p, 1, b.n, fp) != b.n) {
			fprintf(stderr, "kmeans_run: cannot read %s\n", f.c_str());
			return 2;
		}
		fclose(fp);
		b.hash = fnv(b.p, b.n);
	}
	closedir(d);
	for (auto &b : bufs)
		a.bind(b.first.c_str(), b.second.p);
	int step = 0;
	for (i++; i < argc; i++, step++) {
		const EmuRegister *k = emu_kernel(argv[i]);
		if (!k) {
			fprintf(stderr, "kmeans_run: no emulated kernel named %s\n", argv[i]);
			return 1;
		}
		auto t0 = std::chrono::steady_clock::now();
		bool ok = k->fn(a);
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		printf("%s: %.2f s\n", argv[i], s);
		if (!ok) {
			fprintf(stderr, "kmeans_run: the emulation of %s failed\n", argv[i]);
			return 1;
		}
		for (int j = 0; j < k->nptrs; j++) {
			std::string nm = k->ptrs[j];
			Buf &b = bufs[nm];
			uint64_t h = fnv(b.p, b.n);
			if (h == b.hash)
				continue;
			b.hash = h;
			std::string p = dir + "/" + nm + "." + std::to_string(step) + ".out";
			FILE *fp = fopen(p.c_str(), "wb");
			if (!fp || fwrite(b.p, 1, b.n, fp) != b.n || fclose(fp)) {
				fprintf(stderr, "kmeans_run: cannot write %s\n", p.c_str());
				return 2;
			}
		}
	}
	return 0;
}
