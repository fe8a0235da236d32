#!/usr/bin/env python3
"""mkdriver.py - CPU drivers for generated Cake kernels (tools/emu/simt_emu.h).

    python3 tools/emu/mkdriver.py KERNEL.cu DRIVER.cpp [--plan PLAN.txt]
    python3 tools/emu/mkdriver.py --unit KERNEL.cu UNIT.cpp [--plan PLAN.txt]

Reads the CUDA that `cake build --emit=cuda` wrote for one kernel and drops the PTX helper
prelude (simt_emu.h supplies CPU versions of the helpers such kernels use). Two outputs:

- a driver program (the default): it loads every pointer argument from DIR/NAME.bin, takes
  dims and scalars as NAME=VALUE arguments, runs the grid on the emulator and writes every
  pointer argument back to DIR/NAME.out:

      ./driver DIR B=1 T=2 H=1 [lower_bound=-5]

- a translation unit (--unit): the kernel and a launcher registered under the kernel's name
  (emu_registry(), simt_emu.h) that binds buffers and values by parameter name, the way the
  library's runtime binds a route's buffers. A test links several such units with its own
  main() and runs a chain of kernels over shared buffers.

A kernel that loads through TMA takes tensor maps (`const __grid_constant__ CUtensorMap tmX`):
pass --plan with the output of `cake build --emit=plan` for the same kernel, whose "tensor
maps" section gives each map's tensor, dtype, extents, byte strides, box and swizzle as
expressions over the kernel's dims; the driver builds the maps from the bound tensor (named
like the kernel's parameter, e.g. Sums for tmSums) with emu_tensor_map(). The plan may also
be given as a third positional argument (KERNEL.cu OUT.cpp PLAN.txt), the same as --plan.

The dynamic shared memory (`cake_smem`) is the emulator's CTA-wide array emu_smem, so the
generated pointer arithmetic on it and the u32 addresses of ld/st_shared_u32 and of the TMA
and wgmma descriptors (smem_u32() is 0) agree. A kernel that calls wgmma gets one wrapper per
variant it calls, wgmma_m64n<N>k16_<bf16|f16>[_rs][_ta][_tb][_n][_z] (A in registers, M-major A,
N-major B, A negated (imm-scale-a = -1, `acc -= a @ b`); _z, the write-only twin, is called
with scale_d = 0), over the emulator's model emu_wgmma().
"""
import re
import sys

ESIZE = {'f32': 4, 'bf16': 2, 'f16': 2, 'i32': 4, 'u32': 4, 'i64': 8, 'f8e4m3': 1, 'u8': 1}


def parens(s, i):
    """The text inside the parenthesis opening at s[i], and the index after its close."""
    assert s[i] == '('
    depth = 0
    for j in range(i, len(s)):
        if s[j] == '(':
            depth += 1
        elif s[j] == ')':
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
    sys.exit('mkdriver: unbalanced parenthesis in %r' % s)


def split_top(s):
    """Split s at the commas outside parentheses."""
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
            continue
        depth += ch == '('
        depth -= ch == ')'
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def read_tmaps(path):
    """The tensor maps of a plan: var -> (tensor, dtype, rank, dims, strides, box, swizzle bytes)."""
    maps, on = {}, False
    for line in open(path):
        if line.startswith('tensor maps'):
            on = True
            continue
        if on and not line.strip():
            break
        if not on:
            continue
        m = re.match(r'\s+(\w+)\s+(\w+)\s+(\w+)\s+rank\s+(\d+)\s+dims\s+', line)
        if not m:
            sys.exit('mkdriver: cannot read the tensor map line %r of %s' % (line, path))
        rest = line[m.end():]
        dims, k = parens(rest, 0)
        k = rest.index('strides', k) + len('strides')
        strides, k = parens(rest, rest.index('(', k))
        k = rest.index('box', k) + len('box')
        box, k = parens(rest, rest.index('(', k))
        sw = re.search(r'swizzle\s+(\w+)', rest[k:]).group(1)
        swb = 0 if sw == 'none' else int(sw.rstrip('B'))
        maps[m.group(1)] = (m.group(2), m.group(3), int(m.group(4)), split_top(dims), split_top(strides),
                            split_top(box), swb)
    return maps


args = sys.argv[1:]
unit = '--unit' in args
if unit:
    args.remove('--unit')
plan = None
if '--plan' in args:
    i = args.index('--plan')
    plan = args[i + 1]
    del args[i:i + 2]
if len(args) == 3 and plan is None:   # the plan as a positional third argument
    plan = args.pop()
if len(args) != 2:
    sys.exit('usage: mkdriver.py [--unit] KERNEL.cu OUT.cpp [--plan PLAN.txt | PLAN.txt]')
cu, outp = args
src = open(cu).read()
m = re.search(r'// Launch: (\d+) threads per block, \d+ bytes of dynamic shared memory, grid \((.*)\)\.', src)
pm = re.search(r'// Launch: (\d+) threads per block, \d+ bytes of dynamic shared memory, grid min\(#SMs, (.*)\) CTAs \(persistent\)', src)
if pm:
    # a persistent grid: min(#SMs, tiles) CTAs walk the tiles; the emulator's "SMs" are few
    # (SIMT_EMU_SMS, default 3), so each CTA runs several tiles and whatever its roles carry
    # from one tile to the next (ring stages, phases, pending TMA stores) is exercised
    threads, tiles = pm.group(1), pm.group(2)
    grid = ['emu_sms() < (long long)(%s) ? emu_sms() : (long long)(%s)' % (tiles, tiles)]
elif not m or 'persistent' in m.group(0):
    sys.exit('mkdriver: no plain launch line in %s' % cu)
else:
    threads, grid = m.group(1), split_top(m.group(2))
while len(grid) < 3:
    grid.append('1')
k = src.index('extern "C" __global__')
kern = src[k:]
sig = re.search(r'\n(\w+)\(([^)]*)\)\n\{', kern)
name, params = sig.group(1), [p.strip() for p in sig.group(2).split(',') if p.strip()]
# the dynamic shared memory is the emulator's CTA-wide array (smem_u32() of it is 0, so the
# generated pointer arithmetic and the u32 addresses of ld/st_shared_u32 agree)
kern = kern.replace('extern __shared__ __align__(1024) unsigned char cake_smem[];', 'unsigned char *const cake_smem = emu_smem;')
# the wgmma wrappers the kernel calls, over the emulator's model (simt_emu.h, emu_wgmma):
# wgmma_m64n<N>k16_<bf16|f16>[_rs][_ta][_tb][_n][_z] (registers A, M-major A, N-major B, A
# negated: imm-scale-a = -1; the _z twin is passed scale_d = 0, which the model honours like
# the GPU)
wraps = []
for wn, wt, suf in sorted(set(re.findall(r'\bwgmma_m64n(\d+)k16_(bf16|f16)(\w*?)\(', kern))):
    f16 = 'true' if wt == 'f16' else 'false'
    ta = 'true' if '_ta' in suf else 'false'
    tb = 'true' if '_tb' in suf else 'false'
    sca = '-1' if re.search(r'_n(_z)?$', suf) else '1'
    wname = 'wgmma_m64n%sk16_%s%s' % (wn, wt, suf)
    if '_rs' in suf:
        wraps.append('static void %s(float *d, u32 a0, u32 a1, u32 a2, u32 a3, u64 db, int scale_d)\n'
                     '{ const u32 a[4] = {a0, a1, a2, a3}; emu_wgmma(d, %s, %s, a, 0, false, db, %s, scale_d, %s); }' % (wname, wn, f16, tb, sca))
    else:
        wraps.append('static void %s(float *d, u64 da, u64 db, int scale_d)\n'
                     '{ emu_wgmma(d, %s, %s, nullptr, da, %s, db, %s, scale_d, %s); }' % (wname, wn, f16, ta, tb, sca))
tmaps = read_tmaps(plan) if plan else {}
ptrs, scal, maps, call = [], [], [], []
for p in params:
    tm = re.match(r'const\s+__grid_constant__\s+CUtensorMap\s+(\w+)$', p)
    if tm:
        var = tm.group(1)
        if var not in tmaps:
            sys.exit('mkdriver: %s takes the tensor map %s: pass --plan with its `cake build --emit=plan`' % (name, var))
        maps.append(var)
        call.append(var)
        continue
    pm = re.match(r'(.*?)\s*\*\s*__restrict__\s+(\w+)$', p)
    if pm:
        ptrs.append((pm.group(1), pm.group(2)))
        call.append(pm.group(2))
        continue
    sm = re.match(r'(.*?)\s+(\w+)$', p)
    scal.append((sm.group(1), sm.group(2)))
    call.append(sm.group(2))


def map_lines(get):
    """C++ lines building each tensor map; get(tensor) is the expression of its base pointer."""
    out = []
    for var in maps:
        tensor, dt, rank, dims, strides, box, swb = tmaps[var]
        if dt not in ESIZE:
            sys.exit('mkdriver: tensor map %s: unknown dtype %s' % (var, dt))
        out.append('\tconst long long %s_dims_[%d] = {%s};' % (var, rank, ', '.join('(long long)(%s)' % d for d in dims)))
        out.append('\tconst long long %s_strides_[%d] = {0%s};' % (var, rank, ''.join(', (long long)(%s)' % s for s in strides)))
        out.append('\tconst int %s_box_[%d] = {%s};' % (var, rank, ', '.join(box)))
        out.append('\tconst CUtensorMap %s = emu_tensor_map(%s, %d, %d, %s_dims_, %s_strides_, %s_box_, %d);'
                   % (var, get(tensor), ESIZE[dt], rank, var, var, var, swb))
    return out


launch = '\tbool ok = emu_launch((unsigned)(%s), (unsigned)(%s), (unsigned)(%s), %s, [&] { %s(%s); });' % (
    grid[0], grid[1], grid[2], threads, name, ', '.join(call))
head = ['// generated by tools/emu/mkdriver.py%s from %s: do not edit' % (' --unit' if unit else '', cu),
        '#include "simt_emu.h"'] + ([] if unit else ['#include <string>', '#include <map>']) + [''] + wraps + ['', kern, '']
if unit:
    body = ['static bool emu_launch_%s(const EmuArgs &a_)' % name, '{']
    for ty, nm in ptrs:
        body.append('\t%s *%s = (%s *)a_.ptr("%s", "%s");' % (ty, nm, ty, name, nm))
    for ty, nm in scal:
        body.append('\t%s %s = (%s)a_.val("%s", "%s");' % (ty, nm, ty, name, nm))
    body += map_lines(lambda t: 'a_.ptr("%s", "%s")' % (name, t))
    body += [launch, '\treturn ok;', '}',
             'static const char *const emu_ptrs_%s[] = {%s};' % (name, ', '.join('"%s"' % nm for _, nm in ptrs) or '""'),
             'static EmuRegister emu_reg_%s("%s", emu_launch_%s, emu_ptrs_%s, %d);' % (name, name, name, name, len(ptrs)), '']
    open(outp, 'w').write('\n'.join(head + body))
    sys.exit(0)
loads = ['\t%s *%s = (%s *)load(dir, "%s");' % (ty, nm, ty, nm) for ty, nm in ptrs]
loads += ['\tvoid *%s_base_ = load(dir, "%s");' % (tmaps[v][0], tmaps[v][0]) for v in maps
          if tmaps[v][0] not in [nm for _, nm in ptrs]]
scals = ['\t%s %s = (%s)val(argc, argv, "%s");' % (ty, nm, ty, nm) for ty, nm in scal]
ptrnames = [nm for _, nm in ptrs]
mapl = map_lines(lambda t: t if t in ptrnames else '%s_base_' % t)
out = head + [
    'static std::map<std::string, std::vector<char>> bufs;',
    'static void *load(const char *dir, const char *n)', '{',
    '\tstd::string p = std::string(dir) + "/" + n + ".bin";',
    '\tFILE *f = fopen(p.c_str(), "rb");',
    '\tif (!f) { fprintf(stderr, "driver: cannot read %s\\n", p.c_str()); exit(2); }',
    '\tstd::vector<char> &b = bufs[n];',
    '\tfseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);',
    '\tb.resize((size_t)sz + 16);',
    '\tif (fread(b.data(), 1, (size_t)sz, f) != (size_t)sz) exit(2);',
    '\tfclose(f);', '\treturn b.data();', '}',
    'static double val(int argc, char **argv, const char *n)', '{',
    '\tsize_t l = strlen(n);',
    '\tfor (int i = 2; i < argc; i++)',
    '\t\tif (!strncmp(argv[i], n, l) && argv[i][l] == \'=\')',
    '\t\t\treturn atof(argv[i] + l + 1);',
    '\tfprintf(stderr, "driver: no value for %s\\n", n);', '\texit(2);', '}',
    'int main(int argc, char **argv)', '{',
    '\tif (argc < 2) { fprintf(stderr, "usage: driver DIR NAME=VALUE...\\n"); return 2; }',
    '\tconst char *dir = argv[1];'] + loads + scals + mapl + [
    launch,
    '\tfor (auto &b : bufs) {',
    '\t\tstd::string p = std::string(dir) + "/" + b.first + ".out";',
    '\t\tFILE *f = fopen(p.c_str(), "wb");',
    '\t\tif (!f || fwrite(b.second.data(), 1, b.second.size() - 16, f) != b.second.size() - 16) exit(2);',
    '\t\tfclose(f);', '\t}', '\treturn ok ? 0 : 1;', '}', '']
open(outp, 'w').write('\n'.join(out))
