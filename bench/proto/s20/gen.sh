#!/bin/sh
# bench/proto/s20/gen.sh: writes kda_prep2wg.cake (the two-role prep candidate) from head.cake
# and prep2wg.tmpl, one copy of the template per role (% = the role's number).
cd "$(dirname "$0")" || exit 1
{
	cat head.cake
	for r in 0 1; do
		for b in g q k v; do
			echo "  smem $b$r: bf16[64, 128] swizzle 128B ring p$r"
		done
		echo "  smem kb$r: bf16[64, 128] swizzle 128B"
		echo "  barrier f$r ring p$r producers load consumers m$r arrivals 1"
		echo "  barrier e$r ring p$r producers m$r consumers load arrivals 1"
	done
	for r in 0 1; do
		cat <<F
  frag t$r:    bf16[64, 64] in m$r
  frag gs$r:   f32[64, 64] in m$r    # G within each 32-token half; then A_kk, L
  frag o$r:    f32[64, 64] in m$r    # the gate; G - M; G_end; then A_qk
  frag kn$r:   f32[64, 64] in m$r    # q-hat or k-hat; then the inverses of the halves
  frag r$r:    f32[64] in m$r
  frag dtb$r:  f32[64] in m$r
  frag nq$r:   f32[64] in m$r
  frag nk$r:   f32[64] in m$r
  frag bl$r:   bf16[64] in m$r
  frag beta$r: f32[64] in m$r
  frag p16$r:  bf16[64, 64] in m$r
  frag w$r:    f32[64, 128] in m$r
F
	done
	echo "{"
	echo "  in load {"
	for r in 0 1; do
		cat <<F
    for c in 0 .. 1 pipelined p$r {
      let sb = Sl[cp * 2 + $r, 0]
      let st = Sl[cp * 2 + $r, 1]
      wait e$r
F
		for pair in "g G" "q Q" "k K" "v V"; do
			set -- $pair
			echo "      tma $1$r[:, 0 +: 64] <- $2[sb, st +: 64, h, 0 +: 64] signal f$r"
			echo "      tma $1$r[:, 64 +: 64] <- $2[sb, st +: 64, h, 64 +: 64] signal f$r"
		done
		echo "    }"
	done
	echo "  }"
	for r in 0 1; do sed "s/%/$r/g" prep2wg.tmpl; done
	echo "}"
} > kda_prep2wg.cake
