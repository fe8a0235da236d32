/*
 * mcp.c — `cake mcp`: serve Cake's tools over the Model Context Protocol.
 *
 *   cake mcp [--root DIR] [--store PATH] [--examples DIR] [--max-request BYTES] [--quiet]
 *
 * An MCP client starts this as a subprocess and speaks JSON-RPC on its
 * standard input and output (src/agent/mcp.h; docs/AGENTS.md shows how to
 * register it with Claude Code, Codex and Cursor). Standard output carries
 * protocol messages only; logs go to standard error.
 *
 * --root confines every `path` argument (default: the current directory);
 * --store names the candidate store read by history/best/diff (default
 * .cake/store.db); --examples is the Cake tree whose tests/ hold the rule
 * examples of explain_rule (default: the tree this binary was built in,
 * found from /proc/self/exe, else the root). SIGPIPE is ignored so that a
 * client that goes away ends the server with status 2 instead of a signal.
 */
#include "cmd.h"
#include "../agent/mcp.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The Cake tree holding this binary (bin/cake or build/asan/cake), when it
 * has tests/corpus; into buf, or NULL. */
static const char *own_tree(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return NULL;
		*slash = 0;
		char probe[PATH_MAX + 32];
		struct stat st;
		snprintf(probe, sizeof probe, "%s/tests/corpus", exe);
		if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(buf, len, "%s", exe);
			return buf;
		}
	}
	return NULL;
}

int cmd_mcp(int argc, char **argv)
{
	McpOptions o = {0};
	char tree[PATH_MAX];
	for (int i = 1; i < argc; i++) {
		const char *v;
		bool missing = false;
		if ((v = cli_optval(argc, argv, &i, "--root", &missing))) {
			o.root = v;
		} else if ((v = cli_optval(argc, argv, &i, "--store", &missing))) {
			o.store = v;
		} else if ((v = cli_optval(argc, argv, &i, "--examples", &missing))) {
			o.examples = v;
		} else if ((v = cli_optval(argc, argv, &i, "--max-request", &missing))) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(v, &end, 10);
			if (errno || *end || n < 64 || n > (1ull << 30))
				return cmd_usage_error("mcp", "--max-request takes a byte count from 64 to 1073741824, not '%s'", v);
			o.max_line = (size_t)n;
		} else if (strcmp(argv[i], "--quiet") == 0) {
			o.quiet = true;
		} else if (missing) {
			return cmd_usage_error("mcp", "option '%s' needs a value", argv[i]);
		} else {
			return cmd_usage_error("mcp", argv[i][0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'",
			                       argv[i]);
		}
	}
	if (!o.examples)
		o.examples = own_tree(tree, sizeof tree);
	StrBuf err = {0};
	McpServer *s = mcp_server_new(&o, &err);
	if (!s) {
		fprintf(stderr, "cake mcp: %s\n", sb_str(&err));
		sb_free(&err);
		return 2;
	}
	sb_free(&err);
	signal(SIGPIPE, SIG_IGN);
	int rc = mcp_serve(s, stdin, stdout, stderr);
	mcp_server_free(s);
	return rc;
}
