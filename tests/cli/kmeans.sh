#!/bin/sh
# kmeans.sh — `cake kmeans` refusals that need no GPU, and the no-driver path.
# Bad shapes (N = 0, K > N, D not a multiple of 8, D without a kernel, a
# shape outside a kernel's domain) and bad options are refused before any
# launch with a message naming the problem, and so is an --input file holding a NaN or of
# the wrong size; a valid shape on a machine
# without libcuda.so.1 fails fast with the runner's one-line message and
# exit status 69. With a GPU the valid case runs the Lloyd loop instead and
# must end in "verdict: ok".
. "$(dirname "$0")/lib.inc"

run kmeans --shape B=1,N=0,D=128,K=4
expect "kmeans N = 0" 2 err 'N = 0'
run kmeans --shape N=512,K=1024
expect "kmeans K > N" 2 err 'K = 1024 clusters > N = 512 points'
run kmeans --shape D=100
expect "kmeans D % 8" 2 err 'D = 100 is not a positive multiple of 8'
run kmeans --shape D=96
expect "kmeans D without a kernel" 1 err 'written for D = 128, not D = 96'
run kmeans --shape N=1000,K=512
expect "kmeans shape outside the domain" 1 err "outside the domain of 'kmeans_assign': 'N % 256 == 0'"
run kmeans --dtype f32
expect "kmeans bad dtype" 2 err 'bf16 or f16'
run kmeans --shape Q=3
expect "kmeans bad shape name" 2 err 'unknown dimension'
run kmeans --update fastest
expect "kmeans bad update" 2 err '--update is auto, sorted or atomic'
run kmeans --shape N=65536,K=512 --update sorted
expect "kmeans sorted update without a scan for K" 1 err "has no kernel named 'kmeans_scan_k512'"
run kmeans --kernels /nonexistent-dir
expect "kmeans missing kernels" 1 err 'cannot read'

# --input: a NaN coordinate is refused before any launch (even without a GPU); a file of the
# wrong size is refused with the size it needs
python3 -c "
import struct, sys
n = 4096 * 128
v = [0x3f80] * n
v[5 * 128 + 3] = 0x7fc0
open(sys.argv[1], 'wb').write(struct.pack('<%dH' % n, *v))
open(sys.argv[2], 'wb').write(struct.pack('<%dH' % (n - 1), *v[:-1]))
" "$T/nan.bin" "$T/short.bin"
run kmeans --shape B=1,N=4096,D=128,K=512 --input "$T/nan.bin"
expect "kmeans NaN input" 2 err 'input point 5 of batch 0 has a non-finite coordinate'
run kmeans --shape B=1,N=4096,D=128,K=512 --input "$T/short.bin"
expect "kmeans short input" 1 err 'must hold exactly B\*N\*D = 524288 bf16 values'
run kmeans --shape B=1,N=4096,D=128,K=512 --input "$T/missing.bin"
expect "kmeans missing input" 1 err 'cannot read --input'

if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
	run kmeans --shape B=2,N=4096,D=128,K=512 --iters 3
	expect "kmeans end to end" 0 out 'verdict: ok'
else
	for dt in bf16 f16; do
		run kmeans --shape B=2,N=4096,D=128,K=512 --dtype $dt
		expect "kmeans without a GPU ($dt)" 69 err 'no CUDA driver found'
	done
fi
finish
