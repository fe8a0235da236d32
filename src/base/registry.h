/*
 * registry.h — the rule registry: every finding's ID, category, authority,
 * version and rationale, and the verifier version derived from them.
 *
 * Every finding Cake can emit (front end, verifier and lowering alike) has
 * a rule here: a stable ID, a category, an authority (error blocks, warning
 * reports, note hints), a version and a rationale naming the domain it
 * models. docs/RULES.md is generated from this table (`make docs`). It lives
 * in base/ because every stage reports through it and the diagnostic
 * printers read it; it knows nothing of kernels.
 */
#ifndef CAKE_REGISTRY_H
#define CAKE_REGISTRY_H

#include "diag.h"

typedef enum RuleCat {
	CAT_LANGUAGE,   /* lexical, syntax and semantic errors of the front end */
	CAT_SAFETY,     /* program safety: races, memory safety, phase mismatch, deadlock */
	CAT_CONTRACT,   /* hardware contract of the target's instructions and limits */
	CAT_DATA,       /* data consistency: dtype/shape/swizzle traced through dataflow */
	CAT_SCHEDULE,   /* schedule semantics: dead code, uninitialised, unused */
	CAT_LOWERING,   /* the lowering refuses a construct it does not implement (CK-LOW-*) */
} RuleCat;

typedef struct Rule {
	const char *id;         /* "CK-RACE-001" */
	RuleCat cat;
	Severity sev;           /* authority */
	int version;
	const char *title;      /* short name */
	const char *rationale;  /* one paragraph: what it checks and the domain it models */
} Rule;

/* All registered rules in ID order; *n receives the count. */
const Rule *rules_all(int *n);
/* The rule with this ID, or NULL. */
const Rule *rule_find(const char *id);
/* Category name as printed ("program safety", ...). */
const char *rule_cat_name(RuleCat c);
/* Hash of enabled rule IDs and versions, e.g. "v1-3fa2c19e". Stable string. */
const char *verifier_version(void);
/* Write the verifier version ("v1-xxxxxxxx", NUL-terminated) into buf. */
void verifier_version_str(char buf[32]);
/* Print the registry: format "text" (default), "json" or "markdown" (= docs/RULES.md). */
void rules_print(StrBuf *out, const char *format);

#endif
