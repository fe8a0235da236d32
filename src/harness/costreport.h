/*
 * costreport.h — the cost model's report for one kernel at one shape.
 *
 * Module prefix: cost_report.
 */
#ifndef CAKE_COSTREPORT_H
#define CAKE_COSTREPORT_H

#include "../lower/lower.h"

/* Append the cost model's prediction for plan p at shape (NAME=V,...) on
 * target (NULL: h200) with the model file model_path (NULL: the newest
 * version) to out, as text or JSON ({kernel, shape, family, in_domain,
 * cost}). With lines > 0 it adds the `lines` statements that carry the most work per tile
 * (text: a table after the prediction; JSON: a "lines" array), the model's vector and tensor
 * time apportioned to them by their share of their role's operations. Returns 0, 1 for an
 * unknown or uncalibrated target (err names the calibrated ones), 2 for a bad shape or an
 * unreadable model (err says why). */
int cost_report(StrBuf *out, const Plan *p, const char *shape, const char *target, const char *model_path, bool json,
                int lines, char *err, size_t n);

/* The most statements the table ranks (the walk keeps that many per kernel). */
#define COST_REPORT_MAX_LINES 128

#endif
