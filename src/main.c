/*
 * main.c — the `cake` driver: it only dispatches.
 *
 * Each subcommand lives in its own file under src/cmd/ (see cmd.h for the
 * exit-status convention) and compiles through the one pipeline call of
 * src/cake.h. This file is the table from names to entry points plus the
 * top-level --help and --version; adding a command is one file in src/cmd/
 * and one line in `commands[]`.
 *
 * This is the only file allowed global state, and it has none beyond the
 * read-only command table.
 */
#include "cmd/cmd.h"

#include <string.h>

static int cmd_help(int argc, char **argv);

static const struct Command {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the subcommand name */
	const char *usage;
} commands[] = {
	{"check", cmd_check,
	 "check [--format=text|json|sarif] [--dump-after=parse|sema|verify] [--dump=tokens]\n"
	 "             [--no-verify] [--color=auto|always|never] FILE...\n"
	 "      parse, type-check and verify Cake IR files; print every finding"},
	{"fmt", cmd_fmt,
	 "fmt [-w|--write] [--check] FILE...\n"
	 "      print canonical text; -w rewrites files in place, --check lists files\n"
	 "      that are not canonical"},
	{"rules", cmd_rules,
	 "rules [--format=text|json|markdown]\n"
	 "      list every verifier and front-end rule (ID, authority, rationale)"},
	{"build", cmd_build,
	 "build FILE [--emit=plan|cuda|cubin] [-o OUT] [--kernel NAME] [--debug-hang]\n"
	 "             [--no-verify] [--allow-spills] [--dump-after=STAGE]\n"
	 "      derive and lower to CUDA C++ (or a plan, or a cubin through NVRTC)"},
	{"run", cmd_run,
	 "run FILE [NAME=VALUE...] [--kernel NAME] [--seed N] [--timeout SEC] [--time]\n"
	 "           [--iters N] [--warmup N] [--check-rows N] [--oracle=auto|none]\n"
	 "           [--format=text|json] [--debug-hang] [--no-verify] [--device N]\n"
	 "      JIT through NVRTC, run isolated on the GPU, check against its family's oracle, time"},
	{"kmeans", cmd_kmeans,
	 "kmeans [--shape B=..,N=..,D=..,K=..] [--dtype bf16|f16] [--iters N] [--tol T]\n"
	 "           [--seed S] [--input FILE] [--check-rows N] [--no-check] [--kernels DIR]\n"
	 "           [--update auto|sorted|atomic] [--device N] [--format=text|json]\n"
	 "      Lloyd's k-means on the GPU with the kernels/kmeans kernels: iterations, inertia, time"},
	{"kda", cmd_kda,
	 "kda [--shape B=..,H=..,T=..] [--mode decode|prefill] [--state f32|bf16] [--seqlens a,b,c]\n"
	 "           [--lower-bound L] [--kernel FILE[:NAME[+NAME...]]] [--iters N] [--check-heads N] [--no-check]\n"
	 "           [--no-graph] [--allow-spills] [--seed S] [--device N] [--format=text|json]\n"
	 "      one Kimi Delta Attention layer (decode step or prefill) on the GPU with the kernels/kda\n"
	 "      kernels, checked against the float64 recurrence, timed (decode from a CUDA graph)"},
	{"eval", cmd_eval,
	 "eval FILE --shape NAME=V,... [--kernel NAME] [--store PATH] [--force] [--dry-run]\n"
	 "           [--seed N] [--iters N] [--timeout SEC] [--no-time] [--campaign NAME] [--origin ORIGIN]\n"
	 "           [--parent ID] [--format=text|json]\n"
	 "      check, rank, build, run and record one candidate in the store (.cake/store.db);\n"
	 "      the ranking is the cost model (cake cost, docs/COST.md)"},
	{"evolve", cmd_evolve,
	 "evolve FILE|FAMILY --shape NAME=V,... --budget 10m|90s|200c [--store PATH] [--dry-run]\n"
	 "           [--require-gpu] [--kernel NAME] [--baseline FILE] [--width N] [--top N] [--campaign NAME]\n"
	 "           [--format=text|json]\n"
	 "      the search loop: propose with tactics, verify, rank, run the best on the GPU, keep the\n"
	 "      frontier, record everything (resumable); ranking by the cost model (docs/COST.md)"},
	{"log", cmd_log,
	 "log [--family F] [--campaign C] [--verdict V] [--kernel K] [--shape S] [--candidate ID]\n"
	 "           [--gpu G] [--harness KEY] [--limit N] [--store PATH] [--format=text|json]\n"
	 "      the store's evaluations, newest first: verdict, measured median, predicted time, ratio"},
	{"show", cmd_show,
	 "show ID [--store PATH] [--format=text|json]\n"
	 "      one candidate (full id or unique prefix): origin, parent, IR, evaluations, findings"},
	{"best", cmd_best,
	 "best FAMILY --shape S [--kernel K] [--campaign C] [--gpu G] [--store PATH] [--format=text|json]\n"
	 "      the fastest timed ok evaluation of a family at a shape; --frontier [FAMILY]: the best\n"
	 "      per (family, kernel, shape)"},
	{"diff", cmd_diff,
	 "diff A [B] [--context N] [--store PATH] [--format=text|json]\n"
	 "      the IR diff of two candidates (one: A's parent against A) and their evaluations side by side"},
	{"export", cmd_export,
	 "export [--family F] [--verdict V] [--gpu G] [--harness KEY] [...log's filters] [-o FILE] [--store PATH]\n"
	 "      the measurement set as JSON lines (cake-measure/1), oldest first, for calibration"},
	{"import", cmd_import,
	 "import FILE.jsonl... [--candidates FILE.jsonl]... [--store PATH]\n"
	 "      measurement sets (cake-measure/1, with the cake-candidate/1 texts beside them) back into a\n"
	 "      store, as recorded: checked whole before anything is written; a measurement already stored is skipped"},
	{"cost", cmd_cost,
	 "cost FILE --shape NAME=V,... [--kernel NAME] [--target h200] [--model FILE.json] [--format=text|json]\n"
	 "     cost --targets [--format=text|json]\n"
	 "      the cost model's predicted time for a kernel at a shape: its parts, the bottleneck and\n"
	 "      suggestions (no GPU); --targets lists the GPU rows and the source of every fact"},
	{"calibrate", cmd_calibrate,
	 "calibrate [--family F] [--target h200] [--store PATH | --data FILE.jsonl...] [--candidates FILE]\n"
	 "           [--sources DIR...] [--split candidate|group] [--holdout N] [--lambda X] [--rank-weight W]\n"
	 "           [-o data/cost/h200-vN.json] [--format=text|json]\n"
	 "      fit the cost model's coefficients to measured evaluations; report Kendall tau, median\n"
	 "      error and top-3 hits per family on a held-out split; write the new model version"},
	{"families", cmd_families,
	 "families [--format=text|json]\n"
	 "      list the kernel families (inputs, oracle, tolerance, rates) a kernel can name"},
	{"tactics", cmd_tactics,
	 "tactics [--format=text|json]\n"
	 "      list the tactics (named, parameterized IR rewrites) with their parameters"},
	{"apply", cmd_apply,
	 "apply TACTIC[:ARGS] FILE [--kernel NAME]\n"
	 "      apply one tactic to a kernel and print the rewritten program (see docs/TACTICS.md)"},
	{"gate", cmd_gate,
	 "gate [--root DIR] [--gpu] [--timeout SEC] [--format=text|json]\n"
	 "      the corpus gate: valid programs check clean, known-bad ones are caught by the rule\n"
	 "      their '# expect:' names, kernels compile to sm_90a cubins with 0 spills; --gpu runs\n"
	 "      each family's correctness case\n"
	 "  cake gate --store PATH [--no-record] [--trace ID] [--format=text|json]\n"
	 "      rule impact: re-judge every stored candidate with this harness; per rule, true and\n"
	 "      false positives against the recorded GPU verdicts (recorded in the store); --trace\n"
	 "      prints one candidate's history"},
	{"mine", cmd_mine,
	 "mine [--store PATH] [--family F] [--campaign C] [--kernel K] [--shape S] [--max-ok PERCENT]\n"
	 "           [--format=text|json]\n"
	 "      failure mining: group the GPU failures the verifier passed by the schedule features\n"
	 "      they share (rare among ok runs), with the rule family where a check is missing"},
	{"report", cmd_report,
	 "report [--store PATH] [-o FILE] [--title TEXT] [--family F] [--campaign C] [--kernel K] [--shape S]\n"
	 "      the campaign report: one static HTML page (inline SVG, no JavaScript): evolution curve,\n"
	 "      predicted vs measured, verdict mix, frontier with IR diffs, rule impact"},
	{"mcp", cmd_mcp,
	 "mcp [--root DIR] [--store PATH] [--examples DIR] [--max-request BYTES] [--quiet]\n"
	 "      Model Context Protocol server on stdio (check, format, build, rules, explain_rule,\n"
	 "      history, best, diff, tactics, apply_tactic) for coding agents; see docs/AGENTS.md"},
	{"library", cmd_library,
	 "library FAMILY [--domain FILE] [--kernels DIR] [--store PATH [--min-gain F]] -o DIR [--cc CC]\n"
	 "           [--no-compile] [-v] | FAMILY [...] --explain SHAPE... [--brief] | --list\n"
	 "      generate a shape-dispatched C library (.so, header, pkg-config) and a Python package\n"
	 "      from a family's kernels (gemm, kmeans, kda); --explain prints the route a shape takes and why;\n"
	 "      --store takes the store's candidates that are measured faster and interchangeable"},
	{"help", cmd_help,
	 "help\n"
	 "      print this message"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cake COMMAND [OPTIONS] [FILE...]\n\ncommands:\n");
	for (size_t i = 0; i < NELEM(commands); i++)
		fprintf(f, "  cake %s\n", commands[i].usage);
	fprintf(f, "\n  cake --version\n      print the compiler and verifier versions\n"
	        "\nexit status: 0 clean (warnings allowed), 1 errors found, 2 usage or I/O problem,\n"
	        "69 no CUDA driver / NVRTC for a command that needs one\n"
	        "FILE may be '-' to read standard input. See docs/CLI.md.\n");
}

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return cmd_help(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("cake " CAKE_VERSION " (verifier %s)\n", verifier_version());
		return 0;
	}
	for (size_t i = 0; i < NELEM(commands); i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
			return cmd_help(argc - 1, argv + 1);
		return commands[i].run(argc - 1, argv + 1);
	}
	if (cmd[0] == '-')
		return cmd_usage_error(NULL, "unknown option '%s'", cmd);
	return cmd_usage_error(NULL, "unknown command '%s'", cmd);
}
