/*
 * cmd.h — subcommands that live in src/cmd/, one file each.
 *
 * Each handler takes the subcommand's own argument vector (argv[0] is the
 * subcommand name) and returns the process exit status: 0 success, 1 the
 * input has errors or the request does not apply, 2 a usage or I/O error.
 * src/main.c lists them in its command table; docs/CLI.md documents them.
 */
#ifndef CAKE_CMD_H
#define CAKE_CMD_H

/* `cake tactics [--format=text|json]`: list every tactic (name, parameters, summary). */
int cmd_tactics(int argc, char **argv);
/* `cake apply TACTIC[:ARGS] FILE [--kernel NAME]`: print the rewritten program. */
int cmd_apply(int argc, char **argv);

#endif
