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

/* One predicted step on a planned size (`plan --sus --workload`): ok with
 * its figures, or why it could not run. */
typedef struct ts_plan_step_row {
  int ok;
  uint32_t dp;
  double step_s, tokens_s, mfu;
  const char *why;
} ts_plan_step_row;

/* The sweep as a JSON array (as ts_report_plan_sweep), each row with a
 * "step" object from steps[i]: dp, step_s, tokens_per_s,
 * tokens_per_s_per_gpu, mfu and scaling (tokens/s per GPU against the
 * first row that ran), or "error"; and "workload" naming the file. */
int ts_report_plan_sweep_steps(const ts_plan_result *rows,
                               const ts_plan_step_row *steps, uint32_t n,
                               const char *workload, FILE *out);

/* Racks, rows, media per link class, planes, power and cost as text. */
int ts_report_plan_layout_text(const ts_plan_result *r, FILE *out);

/* The bill of materials as CSV, one row per item (header: plane, tier,
 * item, part, quantity, unit_power_w, power_w, unit_price, cost,
 * length_m; empty cells for unknown figures). */
int ts_report_plan_csv(const ts_plan_result *r, FILE *out);

/* Designs side by side: one column per plan (names[i] heads column i):
 * GPUs, switches per tier, cables, modules, power, bisection, worst hops,
 * blast radius of one leaf / spine, step time when step_s[i] > 0 (NULL:
 * no workload). text, or JSON array when json != 0. */
int ts_report_plan_compare(const ts_plan_result *rows, const char *const *names,
                           const double *step_s, uint32_t n, int json,
                           FILE *out);

/* Tier-level diagram: one box per tier group (nodes; leaves of each rail;
 * the spine groups of each rail or the one spine group; each core group),
 * edges labelled with cable counts, one rank per tier. svg != 0 writes SVG
 * (laid out here, no Graphviz), else DOT. Size O(rails + core groups). */
int ts_report_plan_diagram(const ts_plan_result *r, int svg, FILE *out);

#endif
