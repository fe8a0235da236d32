#!/bin/sh
# families.sh — `cake families`: the registered kernel families, in text and JSON.
. "$(dirname "$0")/lib.inc"

run families
expect "families lists gemm" 0 out '^gemm ' out 'kmeans_assign' out 'tolerance'
run families --format=json
expect "families --format=json" 0 out '"name":"gemm"' out '"in_place":\["Cent"\]'
if json_valid "families json" "$T/out"; then ok "families --format=json is valid JSON"; else bad "families --format=json is valid JSON" "$(cat "$T/pyerr")"; fi
run families --format=xml
expect "families --format=xml" 2 err "unknown format 'xml'"
run families extra
expect "families with an argument" 2 err "unexpected argument 'extra'"
finish
