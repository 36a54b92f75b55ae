/* report_plan.c - text and JSON views of a capacity plan and of SU sweeps.
 *
 * Text is for people: one table of tiers, then cables, transceivers,
 * bisection, hops, failures and notes. JSON carries the same figures with
 * bandwidths in bytes/s (numbers, not formatted strings). Cost: O(1) per
 * plan, O(n) per sweep. */
#include <jansson.h>
#include <stdio.h>

#include "report/report_json.h"
#include "topsim/ts_report_plan.h"
#include "topsim/ts_units.h"

static const char *const tier_names[3] = {"leaf", "spine", "core"};
static const char *const cable_names[3] = {"node_leaf", "leaf_spine",
                                           "spine_core"};

static void bw(double v, char *buf, size_t len) {
  ts_format_bandwidth(v, buf, len);
}

/* ---- text ---- */

static void text_head(const ts_plan_result *r, FILE *f) {
  fprintf(f, "plan: %u x %s (%u GPUs of %s), %u SU%s of %u nodes, %u tier%s\n",
          r->nodes, r->template_name, r->gpus, r->gpu_model, r->sus,
          r->sus > 1 ? "s" : "", r->nodes_per_su, r->tiers,
          r->tiers > 1 ? "s" : "");
  fprintf(f, "switch: %u ports at %g Gb/s%s%s, %u rails, efficiency %.2f\n",
          r->tier[0].radix, r->port_speed * 8 / 1e9,
          r->technology[0] ? " " : "", r->technology, r->rails, r->efficiency);
  if (r->leaves_per_rail > 1)
    fprintf(f, "leaves per rail per SU: %u (%u NICs per node, each split into "
            "%u ports of %g Gb/s)\n", r->leaves_per_rail, r->nic_rails,
            r->leaves_per_rail, r->port_speed * 8 / 1e9);
}

static void text_tiers(const ts_plan_result *r, FILE *f) {
  fprintf(f, "%-6s %9s %6s %9s %9s %9s %9s %9s %8s\n", "tier", "switches",
          "radix", "split", "down", "up", "reserved", "free", "oversub");
  for (uint32_t i = 0; i < r->tiers; i++) {
    const ts_plan_tier *t = &r->tier[i];
    char split[24], ov[16];
    snprintf(split, sizeof split, "%u:%u", t->down, t->up);
    snprintf(ov, sizeof ov, t->ports_up ? "%.2f:1" : "-", t->oversub);
    fprintf(f, "%-6s %9u %6u %9s %9llu %9llu %9llu %9llu %8s\n",
            tier_names[i], t->switches, t->radix, split,
            (unsigned long long)t->ports_down, (unsigned long long)t->ports_up,
            (unsigned long long)t->ports_reserved,
            (unsigned long long)t->ports_free, ov);
  }
}

static void text_bom(const ts_plan_result *r, FILE *f) {
  uint64_t total = r->cables[0] + r->cables[1] + r->cables[2];
  fprintf(f, "cables: node-leaf %llu, leaf-spine %llu, spine-core %llu "
          "(total %llu)\n", (unsigned long long)r->cables[0],
          (unsigned long long)r->cables[1], (unsigned long long)r->cables[2],
          (unsigned long long)total);
  fprintf(f, "transceivers: node-leaf %llu, leaf-spine %llu, spine-core %llu "
          "(total %llu)\n", (unsigned long long)r->transceivers[0],
          (unsigned long long)r->transceivers[1],
          (unsigned long long)r->transceivers[2],
          (unsigned long long)r->transceivers_total);
  if (r->tiers > 1)
    fprintf(f, "wiring: %u spine group%s of %u, %u cable%s leaf-spine",
            r->spine_groups, r->spine_groups > 1 ? "s" : "",
            r->spines_per_group, r->leaf_spine_links,
            r->leaf_spine_links > 1 ? "s" : "");
  if (r->tiers > 2)
    fprintf(f, "; %u core group%s of %u, %u cable%s spine-core",
            r->core_groups, r->core_groups > 1 ? "s" : "", r->cores_per_group,
            r->spine_core_links, r->spine_core_links > 1 ? "s" : "");
  if (r->tiers > 1) fprintf(f, "\n");
}

static void text_perf(const ts_plan_result *r, FILE *f) {
  char a[32], b[32];
  bw(r->bisection_bw, a, sizeof a);
  bw(r->bisection_bw_eff, b, sizeof b);
  fprintf(f, "bisection: %s nominal, %s achievable\n", a, b);
  fprintf(f, "worst-case switch hops: %u rail-aligned (PXN)", r->hops_rail);
  if (r->hops_any) fprintf(f, ", %u between any two NICs\n", r->hops_any);
  else fprintf(f, "; rails share no switch (cross-rail traffic needs NVLink)\n");
}

static void text_fail(const ts_plan_result *r, FILE *f) {
  fprintf(f, "one switch failing:\n");
  for (uint32_t i = 0; i < r->tiers; i++) {
    const ts_plan_failure *x = &r->fail[i];
    char a[32];
    bw(x->bisection_after, a, sizeof a);
    if (i == 0)
      fprintf(f, "  leaf:  %u nodes lose 1 of %u rails (%.1f%% of their NIC "
              "bandwidth)", x->nodes_hit, r->rails, 100 * x->uplink_loss);
    else
      fprintf(f, "  %s: %u %s lose %.1f%% of their uplinks",
              i == 1 ? "spine" : "core ", x->switches_hit,
              i == 1 ? "leaves" : "spines", 100 * x->uplink_loss);
    fprintf(f, "; %u GPUs slowed, %u cut off; bisection %s\n", x->gpus_slowed,
            x->gpus_cut_off, a);
  }
}

int ts_report_plan_text(const ts_plan_result *r, FILE *out) {
  text_head(r, out);
  text_tiers(r, out);
  text_bom(r, out);
  text_perf(r, out);
  text_fail(r, out);
  ts_report_plan_layout_text(r, out);
  for (uint32_t i = 0; i < r->note_count; i++)
    fprintf(out, "note: %s\n", r->notes[i]);
  return ferror(out) ? TS_EIO : 0;
}

/* ---- JSON ---- */

static json_t *json_tier(const ts_plan_tier *t, int *bad) {
  json_t *o = json_object();
  report_jset(o, "switches", json_integer(t->switches), bad);
  report_jset(o, "radix", json_integer(t->radix), bad);
  report_jset(o, "down", json_integer(t->down), bad);
  report_jset(o, "up", json_integer(t->up), bad);
  report_jset(o, "ports_down", json_integer((json_int_t)t->ports_down), bad);
  report_jset(o, "ports_up", json_integer((json_int_t)t->ports_up), bad);
  report_jset(o, "ports_reserved", json_integer((json_int_t)t->ports_reserved), bad);
  report_jset(o, "ports_free", json_integer((json_int_t)t->ports_free), bad);
  report_jset(o, "oversubscription", json_real(t->oversub), bad);
  return o;
}

static json_t *json_fail(const ts_plan_failure *x, int *bad) {
  json_t *o = json_object();
  report_jset(o, "switches_hit", json_integer(x->switches_hit), bad);
  report_jset(o, "nodes_hit", json_integer(x->nodes_hit), bad);
  report_jset(o, "capacity_loss", json_real(x->uplink_loss), bad);
  report_jset(o, "gpus_slowed", json_integer(x->gpus_slowed), bad);
  report_jset(o, "gpus_cut_off", json_integer(x->gpus_cut_off), bad);
  report_jset(o, "bisection_after", json_real(x->bisection_after), bad);
  return o;
}

static json_t *json_per_tier(const ts_plan_result *r, int which, int *bad) {
  json_t *o = json_object();
  for (uint32_t i = 0; i < r->tiers; i++) {
    json_t *v = which == 0   ? json_tier(&r->tier[i], bad)
                : which == 1 ? json_fail(&r->fail[i], bad)
                             : NULL;
    report_jset(o, tier_names[i], v, bad);
  }
  return o;
}

static json_t *json_counts(const uint64_t *v, int *bad) {
  json_t *o = json_object();
  for (int i = 0; i < 3; i++)
    report_jset(o, cable_names[i], json_integer((json_int_t)v[i]), bad);
  return o;
}

static void json_head(json_t *o, const ts_plan_result *r, int *bad) {
  report_jset(o, "template", json_string(r->template_name), bad);
  report_jset(o, "gpu_model", json_string(r->gpu_model), bad);
  report_jset(o, "technology", json_string(r->technology), bad);
  report_jset(o, "gpus_requested", json_integer(r->gpus_requested), bad);
  report_jset(o, "gpus", json_integer(r->gpus), bad);
  report_jset(o, "nodes", json_integer(r->nodes), bad);
  report_jset(o, "gpus_per_node", json_integer(r->gpus_per_node), bad);
  report_jset(o, "rails", json_integer(r->rails), bad);
  report_jset(o, "nodes_per_su", json_integer(r->nodes_per_su), bad);
  report_jset(o, "sus", json_integer(r->sus), bad);
  report_jset(o, "last_su_nodes", json_integer(r->last_su_nodes), bad);
  report_jset(o, "port_speed", json_real(r->port_speed), bad);
  report_jset(o, "efficiency", json_real(r->efficiency), bad);
  report_jset(o, "tiers", json_integer(r->tiers), bad);
}

static json_t *json_layout(const ts_plan_layout *L, int *bad) {
  json_t *o = json_object();
  report_jset(o, "switch_model", json_string(L->switch_model), bad);
  report_jset(o, "nodes_per_rack", json_integer(L->nodes_per_rack), bad);
  report_jset(o, "compute_racks", json_integer(L->compute_racks), bad);
  report_jset(o, "network_racks", json_integer(L->network_racks), bad);
  report_jset(o, "racks", json_integer(L->racks), bad);
  report_jset(o, "rows", json_integer(L->rows), bad);
  report_jset(o, "racks_per_row", json_integer(L->racks_per_row), bad);
  report_jset(o, "node_power_w", L->node_power_known
              ? json_real(L->node_power_w) : json_null(), bad);
  report_jset(o, "switch_power_w", L->switch_power_known
              ? json_real(L->switch_power_w) : json_null(), bad);
  report_jset(o, "rack_power_w", json_real(L->rack_power_w), bad);
  report_jset(o, "leaf_rack_power_w", json_real(L->network_rack_power_w), bad);
  report_jset(o, "row_power_w", json_real(L->row_power_w), bad);
  report_jset(o, "power_nodes_w", json_real(L->power_nodes_w), bad);
  report_jset(o, "power_switches_w", json_real(L->power_switches_w), bad);
  report_jset(o, "power_optics_w", json_real(L->power_optics_w), bad);
  report_jset(o, "power_total_w", json_real(L->power_total_w), bad);
  report_jset(o, "priced", json_boolean(L->priced), bad);
  report_jset(o, "cost_total", json_real(L->cost_total), bad);
  report_jset(o, "cost_per_gpu", json_real(L->cost_per_gpu), bad);
  return o;
}

static json_t *json_media(const ts_plan_result *r, int *bad) {
  static const char *const names[5] = {"node_leaf", "leaf_spine", "spine_core",
                                       "storage", "frontend"};
  json_t *o = json_object();
  for (int i = 0; i < 5; i++) {
    const ts_plan_link *m = &r->media[i];
    if (!m->links) continue;
    json_t *x = json_object();
    report_jset(x, "links", json_integer((json_int_t)m->links), bad);
    report_jset(x, "length_m", json_real(m->length_m), bad);
    report_jset(x, "medium", json_string(m->medium), bad);
    report_jset(x, "kind", json_string(m->kind), bad);
    report_jset(x, "module_switch_end", json_string(m->optic_a), bad);
    report_jset(x, "modules_switch_end", json_integer((json_int_t)m->modules_a), bad);
    report_jset(x, "module_far_end", json_string(m->optic_b), bad);
    report_jset(x, "modules_far_end", json_integer((json_int_t)m->modules_b), bad);
    report_jset(x, "power_w", json_real(m->power_w), bad);
    report_jset(o, names[i], x, bad);
  }
  return o;
}

static json_t *json_planes(const ts_plan_result *r, int *bad) {
  json_t *o = json_object();
  for (int i = 0; i < 2; i++) {
    const ts_plan_plane *p = &r->planes[i];
    if (!p->endpoints) continue;
    json_t *x = json_object();
    report_jset(x, "nic_ports", json_integer(p->endpoints), bad);
    report_jset(x, "tiers", json_integer(p->tiers), bad);
    report_jset(x, "leaves", json_integer(p->leaves), bad);
    report_jset(x, "spines", json_integer(p->spines), bad);
    report_jset(x, "cores", json_integer(p->cores), bad);
    report_jset(x, "cables", json_counts(p->cables, bad), bad);
    report_jset(x, "leaf_oversubscription", json_real(p->oversub), bad);
    report_jset(o, p->name, x, bad);
  }
  return o;
}

static json_t *json_plan(const ts_plan_result *r, int *bad) {
  json_t *o = json_object(), *notes = json_array();
  json_head(o, r, bad);
  report_jset(o, "tier", json_per_tier(r, 0, bad), bad);
  report_jset(o, "spine_groups", json_integer(r->spine_groups), bad);
  report_jset(o, "spines_per_group", json_integer(r->spines_per_group), bad);
  report_jset(o, "leaf_spine_links", json_integer(r->leaf_spine_links), bad);
  report_jset(o, "core_groups", json_integer(r->core_groups), bad);
  report_jset(o, "cores_per_group", json_integer(r->cores_per_group), bad);
  report_jset(o, "spine_core_links", json_integer(r->spine_core_links), bad);
  report_jset(o, "cables", json_counts(r->cables, bad), bad);
  report_jset(o, "transceivers", json_counts(r->transceivers, bad), bad);
  report_jset(o, "transceivers_total", json_integer((json_int_t)r->transceivers_total),
       bad);
  report_jset(o, "bisection_bw", json_real(r->bisection_bw), bad);
  report_jset(o, "bisection_bw_achievable", json_real(r->bisection_bw_eff), bad);
  report_jset(o, "hops_rail_aligned", json_integer(r->hops_rail), bad);
  report_jset(o, "hops_any", json_integer(r->hops_any), bad);
  report_jset(o, "failure", json_per_tier(r, 1, bad), bad);
  report_jset(o, "leaves_per_rail", json_integer(r->leaves_per_rail), bad);
  report_jset(o, "layout", json_layout(&r->layout, bad), bad);
  report_jset(o, "media", json_media(r, bad), bad);
  report_jset(o, "planes", json_planes(r, bad), bad);
  for (uint32_t i = 0; i < r->note_count; i++)
    report_japp(notes, json_string(r->notes[i]), bad);
  report_jset(o, "notes", notes, bad);
  return o;
}

static int dump(json_t *root, int bad, FILE *out) {
  int rc = bad || !root ? TS_ENOMEM : 0;
  if (!rc && json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
    rc = TS_EIO;
  if (!rc) fputc('\n', out);
  json_decref(root);
  return rc ? rc : ferror(out) ? TS_EIO : 0;
}

int ts_report_plan_json(const ts_plan_result *r, FILE *out) {
  int bad = 0;
  json_t *root = json_plan(r, &bad);
  return dump(root, bad, out);
}

/* ---- sweeps ---- */

static json_t *json_row(const ts_plan_result *r, int *bad) {
  json_t *o = json_object();
  report_jset(o, "sus", json_integer(r->sus), bad);
  report_jset(o, "nodes", json_integer(r->nodes), bad);
  report_jset(o, "gpus", json_integer(r->gpus), bad);
  report_jset(o, "tiers", json_integer(r->tiers), bad);
  report_jset(o, "leaves", json_integer(r->tier[0].switches), bad);
  report_jset(o, "spines", json_integer(r->tier[1].switches), bad);
  report_jset(o, "cores", json_integer(r->tier[2].switches), bad);
  report_jset(o, "cables", json_counts(r->cables, bad), bad);
  report_jset(o, "bisection_bw", json_real(r->bisection_bw), bad);
  report_jset(o, "racks", json_integer(r->layout.racks), bad);
  report_jset(o, "power_total_w", json_real(r->layout.power_total_w), bad);
  return o;
}

static int sweep_text(const ts_plan_result *rows, uint32_t n, FILE *out) {
  fprintf(out, "%4s %6s %7s %5s %6s %6s %6s %9s %10s %10s %12s\n", "SUs",
          "nodes", "GPUs", "tiers", "leaf", "spine", "core", "node-leaf",
          "leaf-spine", "spine-core", "bisection");
  for (uint32_t i = 0; i < n; i++) {
    const ts_plan_result *r = &rows[i];
    char b[32];
    bw(r->bisection_bw, b, sizeof b);
    fprintf(out, "%4u %6u %7u %5u %6u %6u %6u %9llu %10llu %10llu %12s\n",
            r->sus, r->nodes, r->gpus, r->tiers, r->tier[0].switches,
            r->tier[1].switches, r->tier[2].switches,
            (unsigned long long)r->cables[0], (unsigned long long)r->cables[1],
            (unsigned long long)r->cables[2], b);
  }
  return ferror(out) ? TS_EIO : 0;
}

int ts_report_plan_sweep(const ts_plan_result *rows, uint32_t n, int json,
                         FILE *out) {
  if (!json) return sweep_text(rows, n, out);
  int bad = 0;
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++) report_japp(a, json_row(&rows[i], &bad), &bad);
  return dump(a, bad, out);
}

static json_t *json_step(const ts_plan_step_row *s, uint32_t gpus,
                         double base, int *bad) {
  json_t *o = json_object();
  if (!s->ok) {
    report_jset(o, "error", json_string(s->why ? s->why : ""), bad);
    return o;
  }
  double per = gpus ? s->tokens_s / gpus : 0;
  report_jset(o, "dp", json_integer(s->dp), bad);
  report_jset(o, "step_s", json_real(s->step_s), bad);
  report_jset(o, "tokens_per_s", json_real(s->tokens_s), bad);
  report_jset(o, "tokens_per_s_per_gpu", json_real(per), bad);
  report_jset(o, "mfu", json_real(s->mfu), bad);
  report_jset(o, "scaling", json_real(base > 0 ? per / base : 1), bad);
  return o;
}

int ts_report_plan_sweep_steps(const ts_plan_result *rows,
                               const ts_plan_step_row *steps, uint32_t n,
                               const char *workload, FILE *out) {
  int bad = 0;
  double base = 0; /* tokens/s per GPU of the first size that ran */
  for (uint32_t i = 0; i < n && base == 0; i++)
    if (steps[i].ok && rows[i].gpus) base = steps[i].tokens_s / rows[i].gpus;
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++) {
    json_t *o = json_row(&rows[i], &bad);
    report_jset(o, "workload", json_string(workload), &bad);
    report_jset(o, "step", json_step(&steps[i], rows[i].gpus, base, &bad), &bad);
    report_japp(a, o, &bad);
  }
  return dump(a, bad, out);
}
