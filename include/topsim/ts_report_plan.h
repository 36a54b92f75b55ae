/* ts_report_plan.h - text and JSON reports of capacity plans (`topsim
 * plan`). Kept apart from ts_report.h so the two evolve independently.
 * All functions write to out and return 0 or TS_EIO (write failed) /
 * TS_ENOMEM (JSON building failed); they never free the plans. */
#ifndef TOPSIM_TS_REPORT_PLAN_H
#define TOPSIM_TS_REPORT_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_plan.h"

/* One plan: tiers, ports, cables, transceivers, bisection, hops, failures,
 * notes, as an aligned text table. */
int ts_report_plan_text(const ts_plan_result *r, FILE *out);

/* The same as one JSON object (every field of ts_plan_result but priv). */
int ts_report_plan_json(const ts_plan_result *r, FILE *out);

/* A sweep: one row per plan (SUs, nodes, GPUs, tiers, switches per tier,
 * cables per tier, bisection) as a table, or a JSON array when json != 0. */
int ts_report_plan_sweep(const ts_plan_result *rows, uint32_t n, int json,
                         FILE *out);

#endif
