#!/bin/bash
# bench/kmeans.sh — Cake's k-means kernels (`cake kmeans`) and Flash-KMeans (PyPI
# `flash-kmeans`, Triton) side by side in one invocation on the GPU machine, assign and
# update timed separately. Prints a table last:
#   shape B,N,D,K, dtype, phase, cake µs, flash-kmeans µs, ratio = flash/cake (> 1: Cake
#   faster), notes (padding, check verdict).
# usage: bash bench/kmeans.sh
#   env: CAKE (default bin/cake), ITERS (Lloyd iterations timed by cake kmeans, and timed
#        calls per Flash-KMeans phase; default 20), DTYPES ("bf16,f16"),
#        SHAPES ("B,N,D,K ..."; default the ANCHORS.md shapes plus the CAKE paper's),
#        WHEELS (folder of wheels to install, default .whl), SITE (/tmp/site), OUT (/tmp/cake-kmeans)
# Flash-KMeans is installed from the carried wheels (no network on the GPU machine):
#   python3 -m pip install -q --no-index --no-deps --no-compile --target $SITE $WHEELS/*.whl
# Cake times are the median over Lloyd iterations of each phase, all B batches launched
# back to back between two CUDA events (update = the sorted update: clearing Counts + hist +
# scan + fill + segment sums + divide, or where no scan kernel covers K the atomic one:
# clearing Sums/Counts + scatter + divide; divide also writes ‖c‖² and the centroid shifts); Flash-KMeans times are the median
# of ITERS calls of each phase, also over all B batches. Shapes outside Cake's kernel
# domains run padded (N to a multiple of 128, K to a multiple of 128 and >= 512): the Cake
# time is then for the larger problem (marked "padded"). D = 64 has no Cake update kernel
# yet: its Cake columns read n/a.
set -u
CAKE=${CAKE:-bin/cake}
ITERS=${ITERS:-20}
DTYPES=${DTYPES:-bf16,f16}
SHAPES=${SHAPES:-"32,65536,128,1024 32,16384,128,1000 32,75600,128,1000 1,1048576,128,1024 8,65536,64,256 1,4194304,128,4096"}
WHEELS=${WHEELS:-.whl}
SITE=${SITE:-/tmp/site}
OUT=${OUT:-/tmp/cake-kmeans}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/cake-cache}   # cubin cache in a writable place
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" "$SITE"
: > "$OUT/stderr.txt"
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
	python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHEELS"/*.whl 2>>"$OUT/stderr.txt"
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"

# Flash-KMeans first (one process, every shape and dtype)
t0=$(date +%s)
python3 "$here/kmeans_baseline.py" "$ITERS" "$DTYPES" $SHAPES > "$OUT/flash.jsonl" 2>>"$OUT/stderr.txt"
t1=$(date +%s)
echo "flash-kmeans: $((t1 - t0)) s" >&2

# Cake assign alone through the isolated runner: float64 oracle (ties excused are counted),
# L2-flushed per-batch time at the CAKE paper's shape
for f in kernels/kmeans/assign.cake kernels/kmeans/assign_f16.cake; do
	k=kmeans_assign; [ "$f" = kernels/kmeans/assign_f16.cake ] && k=kmeans_assign_f16
	$CAKE run "$f" --kernel "$k" B=32 N=65536 K=1024 --time --iters "$ITERS" --check-rows 2048 2>&1 | tee -a "$OUT/cake_run.txt" >&2
done
# ... and the divide step alone (float64 divide oracle: means, empty clusters, norms, shifts)
for k in kmeans_divide kmeans_divide_f16; do
	f=kernels/kmeans/update_atomic.cake
	[ "$k" = kmeans_divide_f16 ] && f=kernels/kmeans/update_atomic_f16.cake
	$CAKE run "$f" --kernel "$k" B=4 K=4096 2>&1 | tee -a "$OUT/cake_run.txt" >&2
done

# Cake: one `cake kmeans` per shape and dtype (padded into the kernels' domains)
: > "$OUT/cake.jsonl"
for s in $SHAPES; do
	IFS=, read B N D K <<<"$s"
	Np=$(( (N + 1023) / 1024 * 1024 ))   # the sorted update reads labels 1024 at a time
	Kp=$(( (K + 127) / 128 * 128 ))
	kmin=512
	[ "$D" -eq 64 ] && kmin=256
	[ "$Kp" -lt "$kmin" ] && Kp=$kmin
	for dt in ${DTYPES//,/ }; do
		line=$(timeout 120 $CAKE kmeans --shape "B=$B,N=$Np,D=$D,K=$Kp" --dtype "$dt" --iters "$ITERS" --tol 0 \
			--format=json 2>>"$OUT/stderr.txt" | tail -1)
		case "$line" in
		"{"*) echo "$line" | python3 -c "import json,sys; r=json.load(sys.stdin); r['shape_req']=[$B,$N,$D,$K]; print(json.dumps(r))" >> "$OUT/cake.jsonl" ;;
		*) echo "{\"shape_req\":[$B,$N,$D,$K],\"dtype\":\"$dt\",\"error\":\"cake kmeans failed (see $OUT/stderr.txt)\"}" >> "$OUT/cake.jsonl" ;;
		esac
	done
done
t2=$(date +%s)
echo "cake: $((t2 - t1)) s" >&2

python3 - "$OUT/cake.jsonl" "$OUT/flash.jsonl" <<'PY'
import json, sys
cake, flash = {}, {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        cake[(tuple(r["shape_req"]), r["dtype"])] = r
for line in open(sys.argv[2]):
    if line.startswith("{"):
        r = json.loads(line)
        if "shape" in r:
            flash[(tuple(r["shape"]), r["dtype"])] = r
        elif "error" in r:
            print("flash-kmeans:", r["error"])
keys = sorted(set(cake) | set(flash), key=lambda k: (k[0][1] * k[0][0], k[0], k[1]))
def f(v):
    return f"{v:10.1f}" if isinstance(v, (int, float)) else f"{'n/a':>10}"
print(f"{'shape B,N,D,K':>22} {'dtype':>5} {'phase':>7} {'cake_us':>10} {'flash_us':>10} {'ratio':>6}  notes")
for k in keys:
    c, fl = cake.get(k, {}), flash.get(k, {})
    notes = []
    if c.get("error"):
        notes.append("cake: " + c["error"])
    elif c:
        s = c["shape"]
        if [s["B"], s["N"], s["D"], s["K"]] != list(k[0]):
            notes.append(f"cake padded to N={s['N']},K={s['K']}")
        if c.get("update"):
            notes.append(f"cake update {c['update']}")
        ch = c.get("check", {})
        notes.append("cake check " + ("ok" if c.get("ok") else "FAILED") +
                     (f" ({ch.get('ties_excused', 0)} ties excused)" if ch else ""))
    if fl.get("error"):
        notes.append("flash: " + fl["error"][:80])
    elif fl.get("assign_agree") is not None:
        notes.append(f"flash labels agree with torch on {100 * fl['assign_agree']:.2f}%")
    upd = [v for v in (fl.get("update_sorted_us"), fl.get("update_atomic_us")) if v is not None]
    rows = [("assign", c.get("assign_us", {}).get("median"), fl.get("assign_us")),
            ("update", c.get("update_us", {}).get("median"), min(upd) if upd else None)]
    for ph, cu, fu in rows:
        ratio = f"{fu / cu:6.2f}" if cu and fu else f"{'n/a':>6}"
        steps = c.get("update_steps_us", {})
        unote = ", ".join(f"{n} {v:.1f}" for n, v in steps.items())
        print(f"{','.join(map(str, k[0])):>22} {k[1]:>5} {ph:>7} {f(cu)} {f(fu)} {ratio}  {'; '.join(notes) if ph == 'assign' else unote}")
print("ratio = flash-kmeans / cake (> 1: Cake faster). flash update = the faster of its sorted and atomic updates "
      "(both in flash.jsonl).")
PY
