#!/bin/sh
# tools/layers.sh — check Cake's include graph against its layers.
#
#   sh tools/layers.sh [SRC_DIR]      (default src; exit 1 on a violation)
#
# Each directory under src/ is a layer and may include headers only from the
# layers listed for it below (and from itself). The order is the pipeline's:
# base knows nothing of ours; the front end only base; the schedule model the
# front end; the verifier and the lowering the model but not each other; the
# families the front end; the GPU layer (JIT, driver, launch, runner) the
# plan and the families; the pipeline call (src/cake.h, src/cake.c) all of
# those; the store, the search loop, the apps, the MCP server and the library
# generator sit on the pipeline; commands on anything; main.c only on the
# commands. docs/ARCHITECTURE.md draws the same picture.
set -u
SRC=${1:-src}
allowed() {
	case "$1" in
	base) echo "base" ;;
	front) echo "front base" ;;
	sched) echo "sched front base" ;;
	verify) echo "verify sched front base" ;;
	lower) echo "lower sched front base" ;;
	cost) echo "cost lower sched front base" ;;
	family) echo "family front base" ;;
	gpu) echo "gpu family lower sched front base" ;;
	ROOT) echo "ROOT gpu family cost lower verify sched front base" ;;
	harness) echo "harness ROOT gpu family cost lower verify sched front base" ;;
	app) echo "app ROOT gpu family cost lower verify sched front base" ;;
	agent) echo "agent harness app ROOT gpu family cost lower verify sched front base" ;;
	lib) echo "lib harness app ROOT gpu family cost lower verify sched front base" ;;
	cmd) echo "cmd lib agent harness app ROOT gpu family cost lower verify sched front base" ;;
	MAIN) echo "cmd" ;;
	*) echo "?" ;;
	esac
}
# layer of a path relative to SRC: its first directory, ROOT for src/cake.*,
# MAIN for src/main.c
layer_of() {
	case "$1" in
	main.c) echo MAIN ;;
	*/*) echo "${1%%/*}" ;;
	*) echo ROOT ;;
	esac
}
root=$(cd "$SRC" && pwd) || exit 2
out=$(mktemp "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT INT TERM
for f in $(cd "$root" && find . -name '*.[ch]' | sed 's#^\./##' | sort); do
	from=$(layer_of "$f")
	ok=$(allowed "$from")
	if [ "$ok" = "?" ]; then
		echo "layers: $SRC/$f: directory '$from' is not a known layer (add it to tools/layers.sh and docs/ARCHITECTURE.md)" >> "$out"
		continue
	fi
	dir=$(dirname "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$f"); do
		abs=$(realpath -m "$root/$dir/$inc")
		case "$abs" in
		"$root"/*) p=${abs#"$root"/} ;;
		*) echo "layers: $SRC/$f includes \"$inc\", outside $SRC" >> "$out"; continue ;;
		esac
		to=$(layer_of "$p")
		case " $ok " in
		*" $to "*) ;;
		*) echo "layers: $SRC/$f ($from) includes \"$inc\" ($to); $from may include only: $ok" >> "$out" ;;
		esac
	done
done
if [ -s "$out" ]; then
	cat "$out"
	exit 1
fi
exit 0
