/* report_plan_bom.c - the physical side of a plan: racks, rows, media,
 * planes, power and cost as text, the bill of materials as CSV, and
 * several plans side by side (--compare).
 *
 * Unknown figures (no catalog power or price) print as "unknown" in text
 * and as empty cells in CSV, never as 0. Cost: O(1) per plan. */
#include <jansson.h>
#include <stdio.h>

#include "report/report_json.h"
#include "topsim/ts_report_plan.h"
#include "topsim/ts_units.h"

static const char *const link_names[5] = {"node-leaf", "leaf-spine",
                                          "spine-core", "storage", "frontend"};
static const char *const tier_names[3] = {"leaf", "spine", "core"};

static void kw(double w, int known, char *buf, size_t n) {
  if (!known) snprintf(buf, n, "unknown");
  else snprintf(buf, n, "%.1f kW", w / 1e3);
}

static void text_racks(const ts_plan_result *r, FILE *f) {
  const ts_plan_layout *L = &r->layout;
  char a[32], c[32];
  fprintf(f, "racks: %u (%u compute of %u node%s, %u network), rows %u (%u "
          "racks per SU row)\n", L->racks, L->compute_racks, L->nodes_per_rack,
          L->nodes_per_rack == 1 ? "" : "s", L->network_racks, L->rows,
          L->racks_per_row);
  kw(L->rack_power_w, L->node_power_known, a, sizeof a);
  kw(L->row_power_w, L->node_power_known, c, sizeof c);
  fprintf(f, "power per rack: compute %s, leaf rack %.1f kW%s; per SU row "
          "%s%s\n", a, L->network_rack_power_w / 1e3,
          L->switch_power_known ? "" : " of modules (switch power unknown)", c,
          L->switch_power_known ? "" : " without switches");
}

static void text_media(const ts_plan_result *r, FILE *f) {
  for (int i = 0; i < 5; i++) {
    const ts_plan_link *m = &r->media[i];
    if (!m->links) continue;
    fprintf(f, "  %-10s %8llu links, worst %5.1f m: %s", link_names[i],
            (unsigned long long)m->links, m->length_m,
            m->medium[0] ? m->medium : "no catalog medium");
    if (m->modules_a)
      fprintf(f, " + %llu x %s + %llu x %s", (unsigned long long)m->modules_a,
              m->optic_a, (unsigned long long)m->modules_b, m->optic_b);
    fprintf(f, " (%.1f kW)\n", m->power_w / 1e3);
  }
}

static void text_planes(const ts_plan_result *r, FILE *f) {
  for (int i = 0; i < 2; i++) {
    const ts_plan_plane *p = &r->planes[i];
    if (!p->endpoints) continue;
    fprintf(f, "%s plane: %u NIC ports, %u tier%s, %u leaves, %u spines, %u "
            "cores, leaf %.2f:1\n", p->name, p->endpoints, p->tiers,
            p->tiers > 1 ? "s" : "", p->leaves, p->spines, p->cores,
            p->oversub);
  }
}

static void text_power_cost(const ts_plan_result *r, FILE *f) {
  const ts_plan_layout *L = &r->layout;
  char n[32], s[32];
  kw(L->power_nodes_w, L->node_power_known, n, sizeof n);
  kw(L->power_switches_w, L->switch_power_known, s, sizeof s);
  fprintf(f, "power: nodes %s + switches %s + optics %.1f kW = %.1f kW%s\n",
          n, s, L->power_optics_w / 1e3, L->power_total_w / 1e3,
          L->switch_power_known && L->node_power_known ? "" : " (known parts)");
  if (!L->priced) {
    fprintf(f, "cost: no prices in the catalog (add `price:` entries)\n");
    return;
  }
  fprintf(f, "cost: leaf tier %.0f, spine tier %.0f, core tier %.0f, other "
          "planes %.0f; total %.0f, %.2f per GPU (network only)\n",
          L->cost_tier[0], L->cost_tier[1], L->cost_tier[2], L->cost_planes,
          L->cost_total, L->cost_per_gpu);
}

int ts_report_plan_layout_text(const ts_plan_result *r, FILE *out) {
  text_racks(r, out);
  fprintf(out, "media (switch %s):\n",
          r->layout.switch_model[0] ? r->layout.switch_model : "not in catalog");
  text_media(r, out);
  text_planes(r, out);
  text_power_cost(r, out);
  return ferror(out) ? TS_EIO : 0;
}

/* ---- CSV ---- */

static void cell(FILE *f, double v, int known) {
  if (known) fprintf(f, ",%.10g", v);
  else fputc(',', f);
}

static void csv_row(FILE *f, const char *plane, const char *tier,
                    const char *item, const char *part, uint64_t qty,
                    double unit_w, int w_known, double unit_price,
                    int p_known, double len) {
  fprintf(f, "%s,%s,%s,%s,%llu", plane, tier, item, part,
          (unsigned long long)qty);
  cell(f, unit_w, w_known);
  cell(f, unit_w * (double)qty, w_known);
  cell(f, unit_price, p_known);
  cell(f, unit_price * (double)qty, p_known);
  if (len > 0) fprintf(f, ",%.1f\n", len);
  else fprintf(f, ",\n");
}

static void csv_link(FILE *f, const char *plane, const char *tier,
                     const ts_plan_link *m) {
  if (!m->links) return;
  double per_link = m->links ? m->power_w / (double)m->links : 0;
  int fiber = m->modules_a > 0;
  csv_row(f, plane, tier, "cable",
          m->medium[0] ? m->medium : "unknown", m->links,
          fiber ? 0 : per_link, !fiber && m->medium[0], 0, 0, m->length_m);
  if (!fiber) return;
  double ua = m->power_a_w / (double)m->modules_a;
  double ub = (m->power_w - m->power_a_w) / (double)m->modules_b;
  csv_row(f, plane, tier, "module", m->optic_a, m->modules_a, ua, 1, 0, 0, 0);
  csv_row(f, plane, tier, "module", m->optic_b, m->modules_b, ub, 1, 0, 0, 0);
}

int ts_report_plan_csv(const ts_plan_result *r, FILE *out) {
  const ts_plan_layout *L = &r->layout;
  const char *sw = L->switch_model[0] ? L->switch_model : "unknown";
  fprintf(out, "plane,tier,item,part,quantity,unit_power_w,power_w,"
          "unit_price,cost,length_m\n");
  csv_row(out, "compute", "", "node", r->template_name, r->nodes,
          L->node_power_w, L->node_power_known, 0, 0, 0);
  for (uint32_t i = 0; i < r->tiers; i++)
    csv_row(out, "backend", tier_names[i], "switch", sw, r->tier[i].switches,
            L->switch_power_w, L->switch_power_known, 0, 0, 0);
  for (int i = 0; i < 3; i++)
    csv_link(out, "backend", link_names[i], &r->media[i]);
  for (int i = 0; i < 2; i++) {
    const ts_plan_plane *p = &r->planes[i];
    if (!p->endpoints) continue;
    csv_row(out, p->name, "", "switch", sw, (uint64_t)p->leaves + p->spines +
            p->cores, L->switch_power_w, L->switch_power_known, 0, 0, 0);
    csv_link(out, p->name, "", &r->media[3 + i]);
  }
  csv_row(out, "all", "", "racks", "rack", L->racks, 0, 0, 0, 0, 0);
  return ferror(out) ? TS_EIO : 0;
}

/* ---- side by side ---- */

typedef struct crow {
  const char *label;
  int kind; /* 0 integer, 1 kW, 2 bandwidth, 3 seconds */
} crow;

static double cval(const ts_plan_result *r, int i, const double *step,
                   uint32_t k) {
  const ts_plan_layout *L = &r->layout;
  uint64_t mods = 0;
  for (int j = 0; j < 5; j++) mods += r->media[j].modules_a + r->media[j].modules_b;
  switch (i) {
  case 0: return r->gpus;
  case 1: return r->tiers;
  case 2: return r->tier[0].switches;
  case 3: return r->tier[1].switches;
  case 4: return r->tier[2].switches;
  case 5: return (double)(r->planes[0].leaves + r->planes[0].spines +
                          r->planes[0].cores + r->planes[1].leaves +
                          r->planes[1].spines + r->planes[1].cores);
  case 6: return (double)(r->cables[0] + r->cables[1] + r->cables[2]);
  case 7: return (double)mods;
  case 8: return L->power_total_w;
  case 9: return r->bisection_bw_eff;
  case 10: return r->hops_any;
  case 11: return r->fail[0].gpus_slowed + r->fail[0].gpus_cut_off;
  case 12: return r->fail[1].gpus_slowed + r->fail[1].gpus_cut_off;
  default: return step ? step[k] : 0;
  }
}

static const crow crows[] = {
    {"GPUs", 0}, {"tiers", 0}, {"leaves", 0}, {"spines", 0}, {"cores", 0},
    {"other-plane switches", 0}, {"backend cables", 0},
    {"transceiver modules", 0}, {"power (known parts)", 1},
    {"bisection (achievable)", 2}, {"worst hops", 0},
    {"GPUs hit by one leaf", 0}, {"GPUs hit by one spine", 0},
    {"step time", 3}};
#define NCROWS (sizeof crows / sizeof crows[0])

static void cfmt(double v, int kind, char *b, size_t n) {
  if (kind == 0) snprintf(b, n, "%.0f", v);
  else if (kind == 1) snprintf(b, n, "%.1f kW", v / 1e3);
  else if (kind == 2) ts_format_bandwidth(v, b, n);
  else if (v > 0) snprintf(b, n, "%.4f s", v);
  else snprintf(b, n, "n/a");
}

static int compare_text(const ts_plan_result *rows, const char *const *names,
                        const double *step, uint32_t n, FILE *f) {
  for (uint32_t k = 0; k < n; k++)
    fprintf(f, "design %c: %s\n", 'A' + (int)(k % 26), names[k]);
  fprintf(f, "%-24s", "");
  for (uint32_t k = 0; k < n; k++) fprintf(f, " %18c", 'A' + (int)(k % 26));
  fputc('\n', f);
  for (size_t i = 0; i < NCROWS; i++) {
    if (crows[i].kind == 3 && !step) continue;
    fprintf(f, "%-24s", crows[i].label);
    for (uint32_t k = 0; k < n; k++) {
      char b[32];
      cfmt(cval(&rows[k], (int)i, step, k), crows[i].kind, b, sizeof b);
      fprintf(f, " %18s", b);
    }
    fputc('\n', f);
  }
  return ferror(f) ? TS_EIO : 0;
}

static const char *const ckeys[NCROWS] = {
    "gpus", "tiers", "leaves", "spines", "cores", "other_plane_switches",
    "backend_cables", "modules", "power_w", "bisection_bw_achievable",
    "hops_any", "leaf_failure_gpus", "spine_failure_gpus", "step_time_s"};

int ts_report_plan_compare(const ts_plan_result *rows, const char *const *names,
                           const double *step, uint32_t n, int json,
                           FILE *out) {
  if (!json) return compare_text(rows, names, step, n, out);
  int bad = 0;
  json_t *a = json_array();
  for (uint32_t k = 0; k < n; k++) {
    json_t *o = json_object();
    report_jset(o, "design", json_string(names[k]), &bad);
    for (size_t i = 0; i < NCROWS; i++) {
      if (crows[i].kind == 3 && !step) continue;
      double v = cval(&rows[k], (int)i, step, k);
      report_jset(o, ckeys[i], crows[i].kind == 0
                  ? json_integer((json_int_t)v) : json_real(v), &bad);
    }
    report_japp(a, o, &bad);
  }
  int rc = bad || !a ? TS_ENOMEM : 0;
  if (!rc && json_dumpf(a, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) rc = TS_EIO;
  if (!rc) fputc('\n', out);
  json_decref(a);
  return rc ? rc : ferror(out) ? TS_EIO : 0;
}
