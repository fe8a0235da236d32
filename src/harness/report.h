/*
 * report.h — the campaign report: one static HTML page from the store.
 *
 * `cake report --store S -o report.html` writes a single file (inline CSS
 * and SVG, no JavaScript, no external resource) that reads the same in a
 * browser, a headless renderer or a mail attachment:
 *
 *   1. the evolution curve: per campaign (and family, shape), the best
 *      speedup so far over the first measured ok run against the GPU
 *      minutes spent, from the evaluations in time order; a campaign's
 *      baseline (a root nothing was derived from, in a campaign that
 *      searched) is a dashed reference line, not part of the curve;
 *   2. predicted against measured time (log-log scatter with the diagonal),
 *      for every ok run that has both, naming the cost-model versions;
 *   3. the verdict mix, and the GPU runs the verifier saved (rejections and
 *      refusals never reach the GPU; the GPU seconds they would have cost at
 *      the mean of the runs that did);
 *   4. the frontier table (the best ok run per family, kernel and shape)
 *      with links to each candidate's section, which shows its IR diff from
 *      its parent (src/harness/textdiff.h) or, for a root, its text;
 *   5. the rule-impact table of the latest gate run (`cake gate --store`):
 *      per rule the true and false positives, and each changed work item.
 * Numbers a test looks for carry stable ids (id="verdict-hang",
 * id="saved-runs", id="impact-CK-RES-002-tp", ...).
 *
 * Module prefix: report_.
 */
#ifndef CAKE_REPORT_H
#define CAKE_REPORT_H

#include "store.h"

typedef struct ReportOptions {
	const char *title;           /* page title (NULL: "Cake campaign report") */
	StoreFilter filter;          /* which evaluations (zeroed: all) */
} ReportOptions;

/* Defaults: the default title, every evaluation. */
ReportOptions report_options(void);
/* Append the report of st (see the file comment) to out. Returns 0, or 2
 * with err set on a store failure. */
int report_html(Store *st, const ReportOptions *o, StrBuf *out, char *err, size_t n);

#endif
