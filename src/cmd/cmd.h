/*
 * cmd.h — the subcommands of `cake`, one file each under src/cmd/.
 *
 * A subcommand parses its options, calls the library (the pipeline in
 * src/cake.h, the runner, an app, the store, ...) and prints. It holds no
 * compiler logic of its own. Its entry point takes the arguments after
 * `cake` (argv[0] is the subcommand's name) and returns the process exit
 * status:
 *   0  clean, or only warnings and notes
 *   1  the input has errors (or a check/run failed)
 *   2  usage error or an I/O problem
 *  69  a command that needs a GPU or NVRTC found none (GPU_EXIT_NO_DRIVER)
 * src/main.c holds the table that maps names to entry points; adding a
 * command is one file here plus one line there.
 *
 * The helpers below are the only shared command-line code: the usage-error
 * line, the colour rule (NO_COLOR, TERM=dumb, isatty), the printing of
 * findings, and what the store's query commands (log, show, best, diff,
 * export) share: opening a store read-only, the filter options and the
 * wording of a failed query, so that every command words them the same way.
 */
#ifndef CAKE_CMD_H
#define CAKE_CMD_H

#include "../cake.h"
#include "../harness/store.h"

typedef enum CmdColor { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } CmdColor;

/* ---- entry points (one per file) ---- */
int cmd_check(int argc, char **argv);
int cmd_fmt(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_kmeans(int argc, char **argv);
int cmd_kda(int argc, char **argv);
int cmd_families(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_tactics(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_evolve(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_best(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_mine(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_library(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

/* ---- shared helpers (util.c) ---- */
/* Print "cake CMD: message" and the usage hint to stderr; returns 2. cmd may
 * be NULL (the top level); fmt takes one %s, arg. */
int cmd_usage_error(const char *cmd, const char *fmt, const char *arg);
/* Whether to colour output written to fd under mode c: ALWAYS/NEVER as given;
 * AUTO when fd is a terminal, NO_COLOR is unset and TERM is not "dumb". */
bool cmd_use_color(CmdColor c, int fd);
/* Parse a --color value; false if it is none of auto, always, never. */
bool cmd_parse_color(const char *v, CmdColor *c);
/* Write the buffer to f and flush. */
void cmd_emit(FILE *f, StrBuf *b);
/* Sort the findings and print them gcc-style to standard error (coloured
 * under the AUTO rule); nothing when the list is empty. */
void cmd_print_diags(SourceSet *ss, DiagList *dl);
/* Parse a --dump-after stage name (or the legacy --dump=ast|sema names) into
 * *stage; false if unknown. */
bool cmd_parse_stage(const char *v, int *stage);

/* ---- the store's query commands (util.c) ---- */
/* Open the store at path (NULL: STORE_DEFAULT_PATH) for a query: never
 * created, an empty file is not a store yet. Returns 0 with *st set, or 2
 * after printing "cake CMD: ..." (for a missing file: how a store is made). */
int cmd_open_store(const char *cmd, const char *path, Store **st);
/* Parse the store filter option at argv[*i] (--family, --campaign, --verdict,
 * --kernel, --shape, --candidate, --gpu, --harness, --limit) into f, checking
 * verdict names, shapes and limits: 1 when it was one, 0 when it is not a
 * filter option, 2 after printing a usage error. */
int cmd_filter_option(const char *cmd, int argc, char **argv, int *i, StoreFilter *f);
/* Parse a --format=text|json option at argv[*i] into *fmt: 1 when it was one,
 * 0 when not, 2 after printing a usage error. */
int cmd_format_option(const char *cmd, int argc, char **argv, int *i, StoreFormat *fmt);
/* Print "cake CMD: " and st's message for a failed query; returns the exit
 * status: 1 for STORE_NOT_FOUND and STORE_AMBIGUOUS, 2 for anything else. */
int cmd_store_failed(const char *cmd, Store *st, StoreStatus s);

#endif
