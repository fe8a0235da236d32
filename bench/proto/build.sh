#!/bin/sh
# Build every prototype variant's cubin and the host tools into build/proto
# (run here, carried to the device machine). Prints ptxas resource lines.
set -e
cd "$(dirname "$0")/../.."
O=build/proto
mkdir -p $O
CU=bench/proto/gemm_sm90.cu
v() { # name macros...
	n=$1; shift
	nvcc -cubin -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -Xptxas -v "$@" -o $O/$n.cubin $CU 2>&1 |
		grep -E "registers|spill" | tr '\n' ' ' | sed "s/^/$n: /"; echo
}
v v1_np_c1_lag0 -DPERSISTENT=0 -DCLUSTER_M=1 -DRELEASE_LAG=0
v v2_np_c1      -DPERSISTENT=0 -DCLUSTER_M=1 -DRELEASE_LAG=1
v v3_p_c1       -DPERSISTENT=1 -DCLUSTER_M=1 -DRELEASE_LAG=1
# run 1 cluster variants (remote arrive .release.cluster, lane 0 loops over CTAs)
v v4_p_c2       -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DCLUSTER_ARRIVE_RELEASE=1 -DCLUSTER_ARRIVE_SPREAD=0
v v5_np_c2      -DPERSISTENT=0 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DCLUSTER_ARRIVE_RELEASE=1 -DCLUSTER_ARRIVE_SPREAD=0
v v6_p_c2_g16   -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DGROUP_M=16 -DCLUSTER_ARRIVE_RELEASE=1 -DCLUSTER_ARRIVE_SPREAD=0
v v7_p_c2_g4    -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DGROUP_M=4 -DCLUSTER_ARRIVE_RELEASE=1 -DCLUSTER_ARRIVE_SPREAD=0
# run 2
v v8_p_c1_lag0  -DPERSISTENT=1 -DCLUSTER_M=1 -DRELEASE_LAG=0
v v9_p_c2       -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1
v v10_np_c2     -DPERSISTENT=0 -DCLUSTER_M=2 -DRELEASE_LAG=1
v v11_p_c2_rel  -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DCLUSTER_ARRIVE_RELEASE=1
v v12_p_c2_loop -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=1 -DCLUSTER_ARRIVE_SPREAD=0
v v13_np_c2_lag0 -DPERSISTENT=0 -DCLUSTER_M=2 -DRELEASE_LAG=0
# run 4
v v14_np_c1_lag0_natural -DPERSISTENT=0 -DCLUSTER_M=1 -DRELEASE_LAG=0 -DRASTER=0
v v15_p_c1_natural -DPERSISTENT=1 -DCLUSTER_M=1 -DRELEASE_LAG=1 -DRASTER=0
v v16_np_c1_lag0_g16 -DPERSISTENT=0 -DCLUSTER_M=1 -DRELEASE_LAG=0 -DGROUP_M=16
# run 5
v v17_p_c2_lag0  -DPERSISTENT=1 -DCLUSTER_M=2 -DRELEASE_LAG=0
v hang_c1       -DPERSISTENT=0 -DCLUSTER_M=1 -DCAKE_DEBUG_HANG=1 -DCAKE_PLANT_HANG=1
v dbg_c2        -DPERSISTENT=1 -DCLUSTER_M=2 -DCAKE_DEBUG_HANG=1
CF="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -O2 -Isrc"
gcc $CF -o $O/bench_gemm bench/proto/bench_gemm.c src/gpu/driver.c src/gpu/oracle.c -ldl -lm -lpthread
gcc $CF -o $O/hang_probe bench/proto/hang_probe.c src/gpu/driver.c src/gpu/oracle.c -ldl -lm -lpthread
make -s build/rel/libcake.a
XX=/usr/lib/x86_64-linux-gnu/libxxhash.a
gcc $CF -o $O/cake-run bench/proto/cake_run_main.c build/rel/libcake.a -lsqlite3 -ljansson $XX -ldl -lm -lpthread
# GPU unit tests for the device machine (no sanitizers there; cmocka carried alongside)
for t in test_gpu test_jit; do
	gcc $CF -o $O/$t tests/unit/$t.c build/rel/libcake.a -lsqlite3 -ljansson $XX -ldl -lm -lpthread -lcmocka
done
cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 $O/
