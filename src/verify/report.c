/*
 * report.c — turning a finding into a Diag with its localisation.
 *
 * Every verifier rule reports through v_report: the rule's registered
 * severity (its authority), the primary span, a message, and the role,
 * resource, barrier and pipeline involved, named from the schedule model so
 * that every family spells them the same way. A barrier implies its ring's
 * pipeline when the caller names none.
 */
#include "verify_int.h"

Diag *v_report(Sched *v, const char *rule, Span span, int role, const char *resource,
               int bar, int pipe, const char *fmt, ...)
{
	const Rule *r = rule_find(rule);
	Severity sev = r ? r->sev : SEV_ERROR;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	Diag *d = diag_add(v->c->diags, rule, sev, span, "%s", buf);
	if (role >= 0 && role < v->nroles)
		diag_set(&d->role, "%s", v->roles[role].name);
	if (resource)
		diag_set(&d->resource, "%s", resource);
	if (bar >= 0 && bar < v->nbars) {
		diag_set(&d->barrier, "%s", v->bars[bar].name);
		if (pipe < 0)
			pipe = v->bars[bar].pipe;
	}
	if (pipe >= 0 && pipe < v->npipes)
		diag_set(&d->pipeline, "%s", v->pipes[pipe].name);
	return d;
}
