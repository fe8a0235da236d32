#!/bin/sh
# layers.sh — the include graph follows the layers (tools/layers.sh,
# docs/ARCHITECTURE.md): base includes nothing of ours, front only base,
# verify only sched/front/base, and so on up to main.c, which includes only
# the commands. The checker is also run on small planted trees to show it
# catches an upward include, a sibling include and an unknown layer.
. "$(dirname "$0")/lib.inc"

if out=$(sh tools/layers.sh src 2>&1); then ok "src/ follows the layers"; else bad "src/ follows the layers" "$out"; fi

plant() {   # plant DIR FILE TEXT: a file of a fake src tree
	mkdir -p "$T/$1/$(dirname "$2")"
	printf '%s\n' "$3" > "$T/$1/$2"
}
plant up base/base.h '/* base */'
plant up front/front.h '#include "../base/base.h"'
plant up front/sema.c '#include "../verify/verify.h"'
plant up verify/verify.h '#include "../front/front.h"'
if out=$(sh tools/layers.sh "$T/up" 2>&1); then bad "an upward include is caught" "checker passed"; else
	case "$out" in *"front/sema.c (front) includes \"../verify/verify.h\" (verify)"*) ok "an upward include is caught" ;;
	*) bad "an upward include is caught" "$out" ;; esac
fi
plant side lower/sm90.c '#include "../verify/verify.h"'
plant side verify/verify.h '/* */'
if out=$(sh tools/layers.sh "$T/side" 2>&1); then bad "a sibling include (lower -> verify) is caught" "checker passed"; else
	case "$out" in *"lower/sm90.c (lower)"*) ok "a sibling include (lower -> verify) is caught" ;;
	*) bad "a sibling include (lower -> verify) is caught" "$out" ;; esac
fi
plant main main.c '#include "gpu/gpu.h"'
plant main gpu/gpu.h '/* */'
if out=$(sh tools/layers.sh "$T/main" 2>&1); then bad "main.c may include only commands" "checker passed"; else
	case "$out" in *"main.c (MAIN)"*) ok "main.c may include only commands" ;; *) bad "main.c may include only commands" "$out" ;; esac
fi
plant odd misc/x.c '/* */'
if out=$(sh tools/layers.sh "$T/odd" 2>&1); then bad "an unknown layer is reported" "checker passed"; else
	case "$out" in *"'misc' is not a known layer"*) ok "an unknown layer is reported" ;; *) bad "an unknown layer is reported" "$out" ;; esac
fi
finish
