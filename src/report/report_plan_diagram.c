/* report_plan_diagram.c - the tier-level picture of a plan
 * (ts_report_plan_diagram), built from the plan's counts alone, so it is
 * O(rails + core groups) whatever the cluster size.
 *
 * Tier groups (one box each):
 *   nodes  one box: all nodes (SUs, GPUs);
 *   leaf   one box per rail (the SUs' leaves of that rail), or one box
 *          past 16 rails;
 *   spine  two tiers: one box (the one spine group); three tiers: one box
 *          per rail (that rail's spine groups of every pod), or one box
 *          past 16 rails;
 *   core   one box per core group, or one box past 16 groups.
 * Edges carry cable counts: nodes -> each leaf box (one cable per node),
 * leaf box -> its spine box, spine box -> every core box (rule 7: every
 * core group sees every rail, spread evenly). */
#include <stdio.h>

#include "report/report_tiers.h"
#include "topsim/ts_report_plan.h"

static void per_box(char *b, size_t n, uint32_t switches) {
  snprintf(b, n, "%u switch%s", switches, switches == 1 ? "" : "es");
}

int ts_report_plan_diagram(const ts_plan_result *r, int svg, FILE *out) {
  tdiag d = {0};
  char a[96], b[96];
  uint32_t nleaf = r->rails <= TD_GROUPS_MAX ? r->rails : 1;
  uint32_t nspine = r->tiers == 3 ? nleaf : r->tiers == 2 ? 1 : 0;
  uint32_t ncore = r->tiers < 3 ? 0
                   : r->core_groups <= TD_GROUPS_MAX ? r->core_groups : 1;
  snprintf(a, sizeof a, "%u x %s", r->nodes, r->template_name);
  snprintf(b, sizeof b, "%u GPUs, %u SUs", r->gpus, r->sus);
  uint32_t nodes = td_add_box(&d, 0, a, b), leaf0 = 0, spine0 = 0, core0 = 0;
  for (uint32_t i = 0; i < nleaf; i++) {
    if (nleaf > 1) snprintf(a, sizeof a, "rail %u leaves", i);
    else snprintf(a, sizeof a, "leaves");
    per_box(b, sizeof b, r->tier[0].switches / nleaf);
    uint32_t k = td_add_box(&d, 1, a, b);
    if (!i) leaf0 = k;
  }
  for (uint32_t i = 0; i < nspine; i++) {
    if (nspine > 1) snprintf(a, sizeof a, "rail %u spines", i);
    else snprintf(a, sizeof a, "spines");
    per_box(b, sizeof b, r->tier[1].switches / nspine);
    uint32_t k = td_add_box(&d, 2, a, b);
    if (!i) spine0 = k;
  }
  for (uint32_t i = 0; i < ncore; i++) {
    if (ncore > 1) snprintf(a, sizeof a, "core group %u", i);
    else snprintf(a, sizeof a, "cores");
    per_box(b, sizeof b, r->tier[2].switches / ncore);
    uint32_t k = td_add_box(&d, 3, a, b);
    if (!i) core0 = k;
  }
  for (uint32_t i = 0; i < nleaf; i++) {
    td_add_edge(&d, nodes, leaf0 + i, r->cables[0] / nleaf);
    if (nspine)
      td_add_edge(&d, leaf0 + i, spine0 + (nspine > 1 ? i : 0),
                  r->cables[1] / nleaf);
  }
  for (uint32_t i = 0; i < nspine && ncore; i++)
    for (uint32_t j = 0; j < ncore; j++)
      td_add_edge(&d, spine0 + i, core0 + j,
                  r->cables[2] / ((uint64_t)nspine * ncore));
  int rc = td_write(&d, svg, out);
  td_free(&d);
  return rc;
}
