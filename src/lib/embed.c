/*
 * embed.c — the text `cake library` writes into every generated library and
 * package, embedded into the cake binary at build time.
 *
 * The runtime, the dispatchers, the public headers (src/lib/rt/) and the
 * Python package (src/lib/python/) are ordinary files in the tree, read and
 * reviewed as code; the assembler's .incbin copies each into a read-only
 * symbol (NUL-terminated), so a carried bin/cake needs no source tree to
 * generate a library. The paths are relative to the repository root, where
 * make runs the compiler; the Makefile lists the files as dependencies of
 * this object (an .incbin is invisible to -MMD).
 */
#include "lib.h"

#include <string.h>

#define LIB_ASSET(sym, path)                                                              \
	__asm__(".section .rodata\n"                                                          \
	        ".balign 16\n"                                                                \
	        ".global " #sym "\n" #sym ":\n"                                               \
	        ".incbin \"" path "\"\n"                                                      \
	        ".global " #sym "_end\n" #sym "_end:\n"                                       \
	        ".byte 0\n"                                                                   \
	        ".previous\n");                                                               \
	extern const char sym[], sym##_end[];

LIB_ASSET(lib_asset_rt, "src/lib/rt/cake_rt.inc")
LIB_ASSET(lib_asset_common, "src/lib/rt/lib_common.inc")
LIB_ASSET(lib_asset_gemm_dispatch, "src/lib/rt/gemm_dispatch.inc")
LIB_ASSET(lib_asset_gemm_api, "src/lib/rt/gemm_api.inc")
LIB_ASSET(lib_asset_gemm_h, "src/lib/rt/cake_gemm.h")
LIB_ASSET(lib_asset_kmeans_dispatch, "src/lib/rt/kmeans_dispatch.inc")
LIB_ASSET(lib_asset_kmeans_api, "src/lib/rt/kmeans_api.inc")
LIB_ASSET(lib_asset_kmeans_h, "src/lib/rt/cake_kmeans.h")
LIB_ASSET(lib_asset_kda_dispatch, "src/lib/rt/kda_dispatch.inc")
LIB_ASSET(lib_asset_kda_api, "src/lib/rt/kda_api.inc")
LIB_ASSET(lib_asset_kda_h, "src/lib/rt/cake_kda.h")
LIB_ASSET(lib_asset_py_toml, "src/lib/python/pyproject.toml")
LIB_ASSET(lib_asset_py_build, "src/lib/python/_cake_build.py")
LIB_ASSET(lib_asset_py_init, "src/lib/python/cake_kernels/__init__.py")
LIB_ASSET(lib_asset_py_native, "src/lib/python/cake_kernels/_native.py")
LIB_ASSET(lib_asset_py_gemm, "src/lib/python/cake_kernels/gemm.py")
LIB_ASSET(lib_asset_py_kmeans, "src/lib/python/cake_kernels/kmeans.py")
LIB_ASSET(lib_asset_py_kda, "src/lib/python/cake_kernels/kda.py")

static const struct {
	const char *name;
	const char *start, *end;
} assets[] = {
	{"cake_rt.inc", lib_asset_rt, lib_asset_rt_end},
	{"lib_common.inc", lib_asset_common, lib_asset_common_end},
	{"gemm_dispatch.inc", lib_asset_gemm_dispatch, lib_asset_gemm_dispatch_end},
	{"gemm_api.inc", lib_asset_gemm_api, lib_asset_gemm_api_end},
	{"cake_gemm.h", lib_asset_gemm_h, lib_asset_gemm_h_end},
	{"kmeans_dispatch.inc", lib_asset_kmeans_dispatch, lib_asset_kmeans_dispatch_end},
	{"kmeans_api.inc", lib_asset_kmeans_api, lib_asset_kmeans_api_end},
	{"cake_kmeans.h", lib_asset_kmeans_h, lib_asset_kmeans_h_end},
	{"kda_dispatch.inc", lib_asset_kda_dispatch, lib_asset_kda_dispatch_end},
	{"kda_api.inc", lib_asset_kda_api, lib_asset_kda_api_end},
	{"cake_kda.h", lib_asset_kda_h, lib_asset_kda_h_end},
	{"python/pyproject.toml", lib_asset_py_toml, lib_asset_py_toml_end},
	{"python/_cake_build.py", lib_asset_py_build, lib_asset_py_build_end},
	{"python/cake_kernels/__init__.py", lib_asset_py_init, lib_asset_py_init_end},
	{"python/cake_kernels/_native.py", lib_asset_py_native, lib_asset_py_native_end},
	{"python/cake_kernels/gemm.py", lib_asset_py_gemm, lib_asset_py_gemm_end},
	{"python/cake_kernels/kmeans.py", lib_asset_py_kmeans, lib_asset_py_kmeans_end},
	{"python/cake_kernels/kda.py", lib_asset_py_kda, lib_asset_py_kda_end},
};

static const char *const python_assets[] = {
	"python/pyproject.toml", "python/_cake_build.py", "python/cake_kernels/__init__.py",
	"python/cake_kernels/_native.py", "python/cake_kernels/gemm.py", "python/cake_kernels/kmeans.py",
	"python/cake_kernels/kda.py", NULL,
};

const char *lib_asset(const char *name, size_t *len)
{
	for (size_t i = 0; i < NELEM(assets); i++)
		if (!strcmp(assets[i].name, name)) {
			if (len)
				*len = (size_t)(assets[i].end - assets[i].start);
			return assets[i].start;
		}
	return NULL;
}

const char *const *lib_python_assets(void)
{
	return python_assets;
}
