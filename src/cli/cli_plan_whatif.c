/* cli_plan_whatif.c - `topsim plan ... --workload FILE --what-if`: the blast
 * radius of one failure, counted and simulated side by side.
 *
 * The plan is emitted and loaded as a topology; the workload runs one step
 * on it healthy (or under the user's --fail, --straggler ... faults: every
 * case then adds its failure to those), then once per case with that case
 * failed: the first leaf,
 * spine and core of the backend plane (lowest id: in a generated fabric
 * every switch of a tier is alike, so the first is as bad as any) and the
 * cable from the first GPU's NIC to its leaf. Next to each slowdown stands
 * what the planner counted for that tier (ts_plan_failure: GPUs slowed and
 * cut off, bisection after); the cable has no counted row (one GPU's NIC:
 * 1 GPU slowed, nothing cut off). docs/planning.md explains where the two
 * differ (PXN hides a leaf failure behind a neighbouring NIC). Cost: one
 * step per case, at most five. */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/cli_plan_run.h"
#include "cli/cli_plan_whatif.h"

typedef struct whatif_case {
  const char *what;        /* "none", "leaf", "spine", "core", "cable" */
  char name[300];          /* the failed node or link, "" for none */
  const ts_plan_failure *counted; /* NULL: nothing counted */
  cli_plan_row row;
  char err[800];
} whatif_case;

/* Lowest-id switch of tier `tier` on a backend plane, or UINT32_MAX. */
static uint32_t first_switch(const ts_topo *t, uint32_t tier) {
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *n = ts_topo_node(t, i);
    if (n->kind == TS_NODE_SWITCH && n->tier == tier &&
        n->plane < ts_topo_plane_count(t) &&
        ts_topo_plane(t, n->plane)->kind == TS_PLANE_BACKEND)
      return i;
  }
  return UINT32_MAX;
}

/* "NIC--leaf" of the first backend NIC's cable into "out"; 0 or -1. */
static int first_cable(const ts_topo *t, char *out, size_t len) {
  for (uint32_t l = 0; l < ts_topo_link_count(t); l++) {
    const ts_link *k = ts_topo_link(t, l);
    const ts_node *a = ts_topo_node(t, k->a), *b = ts_topo_node(t, k->b);
    if (a->kind == TS_NODE_NIC && b->kind == TS_NODE_SWITCH &&
        ts_topo_plane(t, b->plane)->kind == TS_PLANE_BACKEND) {
      snprintf(out, len, "%s--%s", ts_topo_node_name(t, k->a),
               ts_topo_node_name(t, k->b));
      return 0;
    }
  }
  return -1;
}

/* Fills the cases that exist in t (a 2-tier fabric has no core). */
static uint32_t cases_of(const ts_topo *t, const ts_plan_result *r,
                         whatif_case *c) {
  static const char *const tiers[] = {"leaf", "spine", "core"};
  uint32_t n = 0;
  c[n++].what = "none";
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t id = first_switch(t, k + 1);
    if (id == UINT32_MAX) continue;
    c[n].what = tiers[k];
    c[n].counted = &r->fail[k];
    snprintf(c[n++].name, sizeof c[0].name, "%s", ts_topo_node_name(t, id));
  }
  if (!first_cable(t, c[n].name, sizeof c[n].name)) c[n++].what = "cable";
  return n;
}

/* One case: the user's faults (base, or NULL) plus the case's failure. */
static void run_case(const char *workload, const ts_topo *t, uint32_t gpus,
                     const ts_faults *base, const ts_step_opts *step,
                     whatif_case *c) {
  ts_faults f;
  ts_faults_init(&f);
  ts_diag d;
  ts_diag_clear(&d);
  c->row.gpus = gpus;
  int rc = base ? ts_faults_copy(&f, base, &d) : 0;
  if (!rc && c->name[0])
    rc = ts_faults_add(&f, TS_FAULT_FAIL, c->name, "--what-if", &d);
  if (!rc) rc = cli_plan_step(workload, t, &f, step, &c->row, &d);
  if (rc) snprintf(c->err, sizeof c->err, "%s", d.msg);
  ts_faults_free(&f);
}

static void print_text(const whatif_case *c, uint32_t n, const char *workload,
                       uint32_t nbase, double bisection) {
  printf("what-if: one failure at a time, workload %s, one step each",
         workload);
  if (nbase)
    printf(", on top of the %u fault%s given", nbase, nbase > 1 ? "s" : "");
  printf("\n");
  printf("%-6s %-44s %7s %7s %10s %11s %9s\n", "fails", "name", "slowed",
         "cut off", "bisection", "step (s)", "slowdown");
  for (uint32_t i = 0; i < n; i++) {
    char slowed[16] = "-", cut[16] = "-", bis[16] = "-";
    if (c[i].counted) {
      snprintf(slowed, sizeof slowed, "%u", c[i].counted->gpus_slowed);
      snprintf(cut, sizeof cut, "%u", c[i].counted->gpus_cut_off);
      snprintf(bis, sizeof bis, "%+.1f%%", bisection > 0 ?
               100 * (c[i].counted->bisection_after / bisection - 1) : 0.0);
    } else if (i > 0) {
      snprintf(slowed, sizeof slowed, "1");
      snprintf(cut, sizeof cut, "0");
    }
    printf("%-6s %-44s %7s %7s %10s ", c[i].what, c[i].name[0] ? c[i].name : "-",
           slowed, cut, bis);
    if (!c[i].row.ok) printf("n/a: %s\n", c[i].err);
    else if (i == 0 || !c[0].row.ok) printf("%11.4f %9s\n", c[i].row.step_s, "-");
    else printf("%11.4f %+8.1f%%\n", c[i].row.step_s,
                100 * (c[i].row.step_s / c[0].row.step_s - 1));
  }
}

static void print_json(const whatif_case *c, uint32_t n, uint32_t nbase,
                       double bisection) {
  printf("{\"faults_given\": %u, \"what_if\": [", nbase);
  for (uint32_t i = 0; i < n; i++) {
    printf("%s\n  {\"fails\": \"%s\", \"name\": \"%s\", ", i ? "," : "",
           c[i].what, c[i].name);
    if (c[i].counted)
      printf("\"counted\": {\"gpus_slowed\": %u, \"gpus_cut_off\": %u, "
             "\"bisection_before_Bps\": %.17g, \"bisection_after_Bps\": "
             "%.17g}, ", c[i].counted->gpus_slowed, c[i].counted->gpus_cut_off,
             bisection, c[i].counted->bisection_after);
    else
      printf("\"counted\": null, ");
    if (c[i].row.ok)
      printf("\"step_time_s\": %.12g, \"tokens_per_s\": %.12g, \"slowdown\": "
             "%.12g}", c[i].row.step_s, c[i].row.tokens_s,
             c[0].row.ok ? c[i].row.step_s / c[0].row.step_s : 0.0);
    else
      printf("\"step_time_s\": null, \"error\": \"see stderr\"}");
  }
  printf("\n]}\n");
  for (uint32_t i = 0; i < n; i++)
    if (!c[i].row.ok) fprintf(stderr, "topsim plan: %s: %s\n", c[i].what, c[i].err);
}

int cli_plan_whatif(const ts_plan_result *r, const char *workload,
                    const ts_faults *faults, const ts_step_opts *step,
                    int json) {
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = cli_plan_topo(r, &t, &d);
  if (rc) return cli_fail(&d, rc);
  whatif_case c[5];
  memset(c, 0, sizeof c);
  uint32_t n = cases_of(t, r, c);
  for (uint32_t i = 0; i < n; i++)
    run_case(workload, t, r->gpus, faults, step, &c[i]);
  uint32_t nbase = faults ? faults->n : 0;
  if (json) print_json(c, n, nbase, r->bisection_bw);
  else print_text(c, n, workload, nbase, r->bisection_bw);
  ts_topo_free(t);
  if (fflush(stdout) || ferror(stdout)) return EX_IOERR;
  return c[0].row.ok ? 0 : EX_DATAERR;
}
