/*
 * hang_probe.c — device experiment for the runner's hang diagnosis.
 *
 * Question: can a parent process read a kernel's flight recorder while the
 * child that launched the kernel is stuck inside cuCtxSynchronize? Design:
 * the parent mmaps an anonymous MAP_SHARED region before fork; the child
 * page-locks and maps it for the device with cuMemHostRegister(DEVICEMAP)
 * and passes the device pointer as the kernel's `dbg` argument; the kernel
 * (built with CAKE_DEBUG_HANG=1, CAKE_PLANT_HANG=1: consumers wait on the
 * wrong parity from the second ring pass) writes {barrier, stage, phase, k,
 * tile} before every wait. The parent's watchdog fires after T seconds,
 * reads the region, prints the story, kills the child.
 *
 * usage: hang_probe file.cubin cluster timeout_s
 */
#include "gpu/gpu.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s file.cubin cluster timeout_s\n", argv[0]);
		return 2;
	}
	int cluster = atoi(argv[2]);
	double timeout = atof(argv[3]);
	int M = 1024, N = 1024, K = 1024;
	size_t region = 1 << 20;
	volatile uint32_t *rec = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rec == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memset((void *)rec, 0, region);
	pid_t pid = fork();
	if (pid == 0) {
		GpuDev g;
		if (gpu_open(&g, 0)) {
			fprintf(stderr, "child: %s\n", g.err);
			_exit(3);
		}
		FILE *f = fopen(argv[1], "rb");
		if (!f)
			_exit(4);
		static char img[4 << 20];
		size_t n = fread(img, 1, sizeof img, f);
		fclose(f);
		(void)n;
		void *mod, *fn;
		GpuPtr dA, dB, dC, dbg;
		if (gpu_module_load(&g, img, &mod) || gpu_module_func(&g, mod, "gemm_bf16_sm90", &fn) ||
		    gpu_func_set_smem(&g, fn, 4 * 49152 + 64 + 1024) || gpu_alloc(&g, &dA, (size_t)M * K * 2) ||
		    gpu_alloc(&g, &dB, (size_t)N * K * 2) || gpu_alloc(&g, &dC, (size_t)M * N * 2) ||
		    gpu_host_register(&g, (void *)rec, region, &dbg)) {
			fprintf(stderr, "child: %s\n", g.err);
			_exit(5);
		}
		fprintf(stderr, "child: host region registered, device pointer 0x%llx\n", (unsigned long long)dbg);
		gpu_memset8(&g, dA, 0x3c, (size_t)M * K * 2);
		gpu_memset8(&g, dB, 0x3c, (size_t)N * K * 2);
		GpuTensorMap ta, tb;
		uint64_t dimsA[2] = {(uint64_t)K, (uint64_t)M}, dimsB[2] = {(uint64_t)K, (uint64_t)N};
		uint64_t strd[1] = {(uint64_t)K * 2};
		uint32_t boxA[2] = {64, 128}, boxB[2] = {64, (uint32_t)(256 / cluster)};
		gpu_tmap_encode(&g, &ta, GPU_TMAP_BF16, 2, dA, dimsA, strd, boxA, GPU_SWZ_128B);
		gpu_tmap_encode(&g, &tb, GPU_TMAP_BF16, 2, dB, dimsB, strd, boxB, GPU_SWZ_128B);
		unsigned grid[3] = {(unsigned)((M / 128) * (N / 256)), 1, 1}, block[3] = {384, 1, 1};
		unsigned cl[3] = {(unsigned)cluster, 1, 1};
		void *args[] = {&ta, &tb, &dC, &M, &N, &K, &dbg};
		if (gpu_launch(&g, fn, grid, block, cl, 4 * 49152 + 64 + 1024, args)) {
			fprintf(stderr, "child: %s\n", g.err);
			_exit(6);
		}
		int r = gpu_sync(&g);
		fprintf(stderr, "child: kernel returned (%s)\n", r ? g.err : "ok");
		_exit(r ? 7 : 0);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			printf("HANGPROBE child exited before the watchdog: status %d\n", WEXITSTATUS(status));
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 > timeout)
			break;
		usleep(10000);
	}
	/* watchdog fired: read the recorder while the child is still stuck */
	int nblocks = (M / 128) * (N / 256);
	const char *role[3] = {"load (warpgroup 0)", "mma (warpgroup 1)", "mma (warpgroup 2)"};
	const char *bar[3] = {"?", "full", "empty"};
	int shown = 0;
	for (int b = 0; b < nblocks && shown < 6; b++)
		for (int w = 0; w < 3; w++) {
			volatile uint32_t *r = rec + (b * 3 + w) * 8;
			if (r[5])
				printf("HANGPROBE cta %d role %s finished\n", b, role[w]);
			else if (r[0])
				printf("HANGPROBE cta %d role %s stuck waiting on %s[%u] phase %u at k=%u (tile %u)\n", b, role[w],
				       bar[r[0] < 3 ? r[0] : 0], r[1], r[2], r[3], r[4]);
			else
				printf("HANGPROBE cta %d role %s never recorded\n", b, role[w]);
			shown++;
		}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("HANGPROBE watchdog fired after %.1f s; child killed (signal %d)\n", timeout,
	       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}
