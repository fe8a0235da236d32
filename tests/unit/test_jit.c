/*
 * test_jit.c — NVRTC JIT and the cubin cache (src/gpu/jit.c). No GPU needed.
 *
 * The ptxas-report parser is checked on canned text. With NVRTC present, a
 * small sm_90a-only kernel (setmaxnreg, wgmma fence) is compiled into a fresh
 * cache directory: registers are reported, spills are reported as bytes (a
 * kernel with a dynamically indexed local array must report a stack frame),
 * the second compile is a cache hit with the same cubin, a corrupted entry is
 * detected and rebuilt, CAKE_NVRTC_LINEINFO=1 gives another key and a cubin
 * with a line table, and a syntax error is a JIT_COMPILE_ERROR naming the
 * problem. Without NVRTC those tests print why and skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu/gpu.h"
#include "base/base.h"

static const char SMALL[] =
	"extern \"C\" __global__ void __launch_bounds__(256, 1) small_k(float *out, int n)\n"
	"{\n"
	"  if (threadIdx.x >= 128) {\n"
	"    asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n"
	"    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
	"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"    if (i < n) out[i] = out[i] * 2.0f + 1.0f;\n"
	"  } else {\n"
	"    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 24;\\n\");\n"
	"  }\n"
	"}\n";

/* Dynamic indexing of a local array forces a stack frame. */
static const char STACKY[] =
	"extern \"C\" __global__ void stacky(float *out, const int *idx)\n"
	"{\n"
	"  float a[64];\n"
	"  for (int i = 0; i < 64; i++) a[i] = out[i];\n"
	"  for (int i = 0; i < 64; i++) a[idx[i] & 63] += out[64 + i];\n"
	"  out[threadIdx.x] = a[idx[threadIdx.x] & 63];\n"
	"}\n";

static bool have_nvrtc(void)
{
	int ma, mi;
	char err[512];
	if (jit_nvrtc_version(&ma, &mi, err, sizeof err) == 0)
		return true;
	printf("skipping NVRTC tests: %s\n", err);
	return false;
}

static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/cake-jit-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

static void test_parse_ptxas(void **state)
{
	(void)state;
	const char *log =
		"ptxas info    : 0 bytes gmem\n"
		"ptxas info    : Compiling entry function 'gemm_bf16' for 'sm_90a'\n"
		"ptxas info    : Function properties for gemm_bf16\n"
		"ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
		"ptxas info    : Used 168 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]\n"
		"ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
		"ptxas info    : Function properties for other\n"
		"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
		"ptxas info    : Used 32 registers\n";
	JitKernelInfo k[4];
	int n = jit_parse_ptxas(log, k, 4);
	assert_int_equal(n, 2);
	assert_string_equal(k[0].name, "gemm_bf16");
	assert_int_equal(k[0].regs, 168);
	assert_int_equal(k[0].stack_bytes, 24);
	assert_int_equal(k[0].spill_stores, 8);
	assert_int_equal(k[0].spill_loads, 12);
	assert_int_equal(k[0].smem_static, 2048);
	assert_int_equal(k[0].barriers, 1);
	assert_string_equal(k[1].name, "other");
	assert_int_equal(k[1].regs, 32);
	assert_int_equal(k[1].spill_stores, 0);
	/* a short array never overflows, and the count says what did not fit */
	JitKernelInfo one[2];
	memset(one, 0, sizeof one);
	assert_int_equal(jit_parse_ptxas(log, one, 1), 2);
	assert_string_equal(one[0].name, "gemm_bf16");
	assert_string_equal(one[1].name, "");
	assert_int_equal(jit_parse_ptxas("", k, 4), 0);
	/* 40 kernels into a 32-slot report: the count is 40 */
	char big[40 * 160] = "";
	for (int i = 0; i < 40; i++)
		snprintf(big + strlen(big), sizeof big - strlen(big),
		         "ptxas info    : Compiling entry function 'k%d' for 'sm_90a'\nptxas info    : Used 8 registers\n", i);
	JitKernelInfo many[32];
	assert_int_equal(jit_parse_ptxas(big, many, 32), 40);
	assert_string_equal(many[31].name, "k31");
}

static void test_cache_dir(void **state)
{
	(void)state;
	char buf[512];
	JitOptions o = {0};
	o.cache_dir = "/x/y";
	assert_string_equal(jit_cache_dir(&o, buf, sizeof buf), "/x/y");
	setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
	assert_string_equal(jit_cache_dir(NULL, buf, sizeof buf), "/tmp/xdg-test/cake");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/someone", 1);
	assert_string_equal(jit_cache_dir(NULL, buf, sizeof buf), "/home/someone/.cache/cake");
}

static void test_compile_and_cache(void **state)
{
	(void)state;
	if (!have_nvrtc()) {
		skip();
		return;
	}
	char *dir = make_tmpdir();
	setenv("XDG_CACHE_HOME", dir, 1);   /* default cache location: $XDG_CACHE_HOME/cake */
	JitResult r1, r2, r3;
	char err[512];
	assert_int_equal(jit_compile(SMALL, "small.cu", NULL, &r1, err, sizeof err), JIT_OK);
	assert_false(r1.cache_hit);
	assert_true(r1.cubin_len > 100);
	assert_memory_equal(r1.cubin, "\177ELF", 4);
	assert_int_equal(r1.nkern, 1);
	assert_string_equal(r1.kern[0].name, "small_k");
	assert_true(r1.kern[0].regs > 0);
	assert_int_equal(r1.kern[0].spill_stores, 0);
	assert_non_null(strstr(r1.log, "registers"));

	/* second compile: a hit, same bytes, same report */
	assert_int_equal(jit_compile(SMALL, "small.cu", NULL, &r2, err, sizeof err), JIT_OK);
	assert_true(r2.cache_hit);
	assert_string_equal(r1.key, r2.key);
	assert_int_equal(r1.cubin_len, r2.cubin_len);
	assert_memory_equal(r1.cubin, r2.cubin, r1.cubin_len);
	assert_int_equal(r2.kern[0].regs, r1.kern[0].regs);

	/* a different option is a different key */
	const char *ex[] = {"-DSOMETHING=1"};
	JitOptions o = {0};
	o.extra = ex;
	o.nextra = 1;
	assert_int_equal(jit_compile(SMALL, "small.cu", &o, &r3, err, sizeof err), JIT_OK);
	assert_false(r3.cache_hit);
	assert_string_not_equal(r3.key, r1.key);
	jit_result_free(&r3);

	/* corrupt the entry: flip a byte inside the cubin payload */
	char path[1024];
	snprintf(path, sizeof path, "%s/cake/%s.cubin", dir, r1.key);
	size_t len = 0;
	char *data = read_file(path, &len);
	assert_non_null(data);
	data[len / 2] ^= 0x5a;
	assert_int_equal(write_file_atomic(path, data, len), 0);
	free(data);
	assert_int_equal(jit_compile(SMALL, "small.cu", NULL, &r3, err, sizeof err), JIT_OK);
	assert_false(r3.cache_hit);   /* detected and rebuilt, never trusted */
	assert_memory_equal(r3.cubin, r1.cubin, r1.cubin_len);
	jit_result_free(&r3);
	/* truncated entry */
	assert_int_equal(write_file_atomic(path, "CAKECUB1", 8), 0);
	assert_int_equal(jit_compile(SMALL, "small.cu", NULL, &r3, err, sizeof err), JIT_OK);
	assert_false(r3.cache_hit);
	jit_result_free(&r3);
	/* after the rebuild the entry is good again */
	assert_int_equal(jit_compile(SMALL, "small.cu", NULL, &r3, err, sizeof err), JIT_OK);
	assert_true(r3.cache_hit);
	jit_result_free(&r3);

	jit_result_free(&r1);
	jit_result_free(&r2);
	unsetenv("XDG_CACHE_HOME");
	rm_rf(dir);
	free(dir);
}

/* An ELF image holds a section name when its section-name table has it. */
static bool has_bytes(const void *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp((const char *)hay + i, needle, m))
			return true;
	return false;
}

/* CAKE_NVRTC_LINEINFO=1 adds -lineinfo: another cache key, and a cubin with a line table
 * (the SASS-to-source map ncu and nvdisasm -g read) that the plain compile does not have. */
static void test_lineinfo(void **state)
{
	(void)state;
	if (!have_nvrtc()) {
		skip();
		return;
	}
	char *dir = make_tmpdir();
	JitOptions o = {0};
	o.cache_dir = dir;
	JitResult r1, r2;
	char err[512];
	unsetenv("CAKE_NVRTC_LINEINFO");
	assert_int_equal(jit_compile(SMALL, "small.cu", &o, &r1, err, sizeof err), JIT_OK);
	setenv("CAKE_NVRTC_LINEINFO", "1", 1);
	assert_int_equal(jit_compile(SMALL, "small.cu", &o, &r2, err, sizeof err), JIT_OK);
	unsetenv("CAKE_NVRTC_LINEINFO");
	assert_false(r2.cache_hit);
	assert_string_not_equal(r1.key, r2.key);
	assert_false(has_bytes(r1.cubin, r1.cubin_len, ".nv_debug_line_sass"));
	assert_true(has_bytes(r2.cubin, r2.cubin_len, ".nv_debug_line_sass"));
	assert_int_equal(r2.kern[0].regs, r1.kern[0].regs);   /* it changes no code */
	jit_result_free(&r1);
	jit_result_free(&r2);
	rm_rf(dir);
	free(dir);
}

static void test_stack_reported(void **state)
{
	(void)state;
	if (!have_nvrtc()) {
		skip();
		return;
	}
	char *dir = make_tmpdir();
	JitOptions o = {0};
	o.cache_dir = dir;
	JitResult r;
	char err[512];
	assert_int_equal(jit_compile(STACKY, "stacky.cu", &o, &r, err, sizeof err), JIT_OK);
	assert_int_equal(r.nkern, 1);
	if (r.kern[0].stack_bytes < 64 * 4)
		printf("%s", r.log);
	assert_true(r.kern[0].stack_bytes >= 64 * 4);
	jit_result_free(&r);
	rm_rf(dir);
	free(dir);
}

static void test_compile_error(void **state)
{
	(void)state;
	if (!have_nvrtc()) {
		skip();
		return;
	}
	char *dir = make_tmpdir();
	JitOptions o = {0};
	o.cache_dir = dir;
	JitResult r;
	char err[512];
	int rc = jit_compile("extern \"C\" __global__ void bad(int *p) { p[0] = undeclared_thing; }\n", "bad.cu", &o, &r,
	                     err, sizeof err);
	assert_int_equal(rc, JIT_COMPILE_ERROR);
	assert_non_null(strstr(err, "bad.cu"));
	assert_non_null(strstr(err, "undeclared_thing"));
	assert_non_null(r.log);
	assert_null(r.cubin);
	jit_result_free(&r);
	/* sm_90a-only PTX refused for sm_80: the arch option is honoured */
	o.arch = "sm_80";
	rc = jit_compile(SMALL, "small.cu", &o, &r, err, sizeof err);
	assert_int_equal(rc, JIT_COMPILE_ERROR);
	jit_result_free(&r);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ptxas),
		cmocka_unit_test(test_cache_dir),
		cmocka_unit_test(test_compile_and_cache),
		cmocka_unit_test(test_lineinfo),
		cmocka_unit_test(test_stack_reported),
		cmocka_unit_test(test_compile_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
