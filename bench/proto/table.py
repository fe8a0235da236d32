"""Side-by-side table from bench_gemm RESULT lines and torch_gemm TORCH lines.
usage: python3 table.py LOG...   (ratio = cuBLAS time / our time; >1 = faster)"""
import sys, re
ours, ref = {}, {}
for path in sys.argv[1:]:
    for line in open(path):
        f = line.split()
        if not f:
            continue
        kv = dict(x.split("=", 1) for x in f if "=" in x)
        if f[0] == "RESULT" and "median_us" in kv:
            ours.setdefault((f[2], f[3], f[4]), []).append((f[1], float(kv["median_us"]), kv["rel_err"], f[-1]))
        elif f[0] == "RESULT":
            ours.setdefault((f[2], f[3], f[4]), []).append((f[1], float("inf"), " ".join(f[5:])[:40], "FAULT"))
        elif f[0] == "TORCH":
            ref.setdefault((f[1], f[2], f[3]), []).append(float(kv["median_us"]))
ref = {k: sum(v) / len(v) for k, v in ref.items()}   # mean of the runs before and after ours
print(f"{'shape':>16} {'variant':>14} {'ours_us':>9} {'cublas_us':>9} {'ratio':>6} {'rel_err':>9} ok")
for shape, rows in ours.items():
    r = ref.get(shape)
    for name, us, err, ok in rows:
        ratio = f"{r/us:.3f}" if r and us != float('inf') else "-"
        print(f"{'x'.join(shape):>16} {name:>14} {us:9.1f} {r if r else float('nan'):9.1f} {ratio:>6} {err:>9} {ok}")
