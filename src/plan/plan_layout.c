/* plan_layout.c - racks, rows, cable lengths, media, power and cost of a
 * sized plan (plan_layout), including the storage and frontend planes.
 *
 * Layout model (docs/planning.md "Racks, rows, power"):
 *   - nodes per rack: given, else the most that fit the rack's power budget
 *     (rack_power / node power) and space (rack_units / node_units), else 1;
 *   - a row holds one SU: its compute racks and its leaf racks (leaves x
 *     switch units / rack units, rounded up), the leaf racks at the end of
 *     the row or in its middle; spines and cores stand in network rows in the
 *     middle of the hall, each as long as an SU row;
 *   - worst-case cable lengths (w = rack width, p = row pitch, s = 3 m of
 *     vertical run and slack for the two rack ends):
 *       node-leaf  = (racks_per_row - 1) x w + s, end of row
 *                  = ceil((racks_per_row - 1) / 2) x w + s, middle of row
 *       leaf-spine = ceil(rows / 2) x p + racks_per_row x w + s
 *       spine-core = network_rows x p + racks_per_row x w + s
 *   - medium per link class: the catalog's DAC if it reaches, else an AOC,
 *     else fiber with a module at each end (same fiber type, shortest reach
 *     that covers the length; twin-port modules where the switch has
 *     twin-port cages and, at a NIC split k ways, k-port modules);
 *   - power: nodes x template power + switches x catalog power + modules and
 *     active cable ends; a figure the catalog does not state is reported
 *     unknown and left out of the totals (with a note);
 *   - cost: prices of the catalog entries used, when it gives them.
 * Cost: O(catalog entries) per link class. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan/plan_catalog.h"

#define PLAN_ERR(d, ...) ts_diag_set((d), TS_EUSAGE, NULL, 0, 0, __VA_ARGS__)
#define SLACK_M 3.0

static uint64_t ceil_div(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }
static double known(double v) { return v > 0 ? v : 0; }

/* ---- nodes per rack, racks, rows ---- */

static int rack_nodes(const ts_plan_request *q, const plan_tmpl *t,
                      ts_plan_result *r, ts_diag *d) {
  ts_plan_layout *L = &r->layout;
  uint32_t n = q->nodes_per_rack, ru = q->rack_units ? q->rack_units : 42;
  if (!n && q->rack_power > 0 && t->power <= 0)
    return PLAN_ERR(d, "--rack-power needs the template's power (template "
                    "'%s' states none)", t->name);
  if (!n && (q->rack_power > 0 || q->node_units)) {
    uint64_t by_power = q->rack_power > 0 ? (uint64_t)(q->rack_power / t->power)
                                          : UINT32_MAX;
    uint64_t by_space = q->node_units ? ru / q->node_units : UINT32_MAX;
    n = (uint32_t)(by_power < by_space ? by_power : by_space);
    if (!n)
      return PLAN_ERR(d, "one %s node (%.1f kW, %u U) does not fit a rack of "
                      "%.1f kW and %u U", t->name, t->power / 1e3,
                      q->node_units, q->rack_power / 1e3, ru);
  }
  if (!n) {
    n = 1;
    plan_note(r, "one node per rack: give --nodes-per-rack or --rack-power "
              "(and --node-units) for a rack layout");
  }
  L->nodes_per_rack = n;
  L->node_power_w = t->power;
  L->node_power_known = t->power > 0;
  return 0;
}

static void racks_rows(const ts_plan_request *q, ts_plan_result *r) {
  ts_plan_layout *L = &r->layout;
  uint32_t ru = q->rack_units ? q->rack_units : 42, u = L->switch_units;
  uint32_t per = L->nodes_per_rack, su = r->nodes_per_su;
  uint32_t full = r->sus - 1, last = r->last_su_nodes ? r->last_su_nodes : su;
  uint32_t leaves_su = r->tier[0].switches / r->sus;
  uint32_t leaf_racks = (uint32_t)ceil_div((uint64_t)leaves_su * u, ru);
  L->compute_racks = full * (uint32_t)ceil_div(su, per) +
                     (uint32_t)ceil_div(last, per);
  L->racks_per_row = (uint32_t)ceil_div(su, per) + leaf_racks;
  L->rows = r->sus;
  uint64_t top = (uint64_t)r->tier[1].switches + r->tier[2].switches;
  uint32_t net_racks = (uint32_t)ceil_div(top * u, ru);
  uint32_t net_rows = (uint32_t)ceil_div(net_racks, L->racks_per_row);
  L->network_racks = leaf_racks * r->sus + net_racks;
  L->racks = L->compute_racks + L->network_racks;
  L->rows += net_rows;
}

/* ---- media ---- */

static int speed_ok(double have, double want) {
  return have <= 0 || fabs(have - want) < 1e-6 * want;
}

static const cat_optic *optic(const plan_catalog *c, double speed, double len,
                              const char *fiber, uint32_t ports) {
  const cat_optic *best = NULL;
  for (uint32_t i = 0; i < c->nop; i++) {
    const cat_optic *o = &c->op[i];
    if (!speed_ok(o->speed, speed) || o->reach < len || o->ports != ports ||
        (fiber && strcmp(o->fiber, fiber)))
      continue;
    if (!best || o->reach < best->reach) best = o;
  }
  return best;
}

static const cat_cable *cable(const plan_catalog *c, const char *kind,
                              const char *fiber, double speed, double len) {
  const cat_cable *best = NULL;
  for (uint32_t i = 0; i < c->ncb; i++) {
    const cat_cable *b = &c->cb[i];
    if (strcmp(b->kind, kind) || !speed_ok(b->speed, speed)) continue;
    if (fiber ? strcmp(b->fiber, fiber) != 0 : b->reach < len) continue;
    if (!best || b->reach < best->reach) best = b;
  }
  return best;
}

/* Fiber: a module pair of one fiber type and a cable of that type. */
static int fiber_pair(const plan_catalog *c, double speed, double len,
                      uint32_t pa, uint32_t pb, const cat_optic **a,
                      const cat_optic **b, const cat_cable **cb) {
  static const char *const types[] = {"mmf", "smf"};
  for (int i = 0; i < 2; i++) {
    *a = optic(c, speed, len, types[i], pa);
    *b = optic(c, speed, len, types[i], pb);
    if (!*a && pa > 1) *a = optic(c, speed, len, types[i], 1);
    if (!*b && pb > 1) *b = optic(c, speed, len, types[i], 1);
    *cb = cable(c, "fiber", types[i], speed, len);
    if (*a && *b && *cb) return 1;
  }
  return 0;
}

/* Chooses the medium of one link class; pa/pb = links per module wanted at
 * the switch end / far end. Returns 0, or 1 when nothing reaches (noted). */
static int choose(const plan_catalog *c, double speed, uint32_t pa,
                  uint32_t pb, ts_plan_link *m, int *priced) {
  const cat_cable *cb = cable(c, "dac", NULL, speed, m->length_m);
  if (!cb) cb = cable(c, "aoc", NULL, speed, m->length_m);
  if (cb) {
    snprintf(m->medium, sizeof m->medium, "%s", cb->name);
    snprintf(m->kind, sizeof m->kind, "%s", cb->kind);
    m->power_w = 2.0 * (double)m->links * known(cb->power);
    m->power_a_w = m->power_w / 2;
    m->cost = (double)m->links * known(cb->price);
    *priced |= cb->price >= 0;
    return 0;
  }
  const cat_optic *a, *b;
  if (!fiber_pair(c, speed, m->length_m, pa, pb, &a, &b, &cb)) return 1;
  snprintf(m->medium, sizeof m->medium, "%s", cb->name);
  snprintf(m->kind, sizeof m->kind, "fiber");
  snprintf(m->optic_a, sizeof m->optic_a, "%s", a->name);
  snprintf(m->optic_b, sizeof m->optic_b, "%s", b->name);
  m->modules_a = ceil_div(m->links, a->ports);
  m->modules_b = ceil_div(m->links, b->ports);
  m->power_a_w = (double)m->modules_a * known(a->power);
  m->power_w = m->power_a_w + (double)m->modules_b * known(b->power);
  m->cost = (double)m->links * known(cb->price) +
            (double)m->modules_a * known(a->price) +
            (double)m->modules_b * known(b->price);
  *priced |= a->price >= 0 || b->price >= 0 || cb->price >= 0;
  return 0;
}

static void lengths(const ts_plan_request *q, ts_plan_result *r) {
  const ts_plan_layout *L = &r->layout;
  double w = q->rack_width > 0 ? q->rack_width : 0.6;
  double p = q->row_pitch > 0 ? q->row_pitch : 2.4;
  uint32_t rpr = L->racks_per_row, across = rpr ? rpr - 1 : 0;
  if (q->leaf_middle_of_row) across = (across + 1) / 2;
  uint32_t net_rows = L->rows - r->sus;
  r->media[0].length_m = across * w + SLACK_M;
  r->media[1].length_m = (double)ceil_div(r->sus, 2) * p + rpr * w + SLACK_M;
  r->media[2].length_m = net_rows * p + rpr * w + SLACK_M;
  r->media[3].length_m = r->media[0].length_m;
  r->media[4].length_m = r->media[0].length_m;
}

static void media(const plan_catalog *c, const cat_switch *sw,
                  ts_plan_result *r) {
  uint32_t cage = sw ? sw->ports_per_cage : 1;
  int *priced = &r->layout.priced;
  for (int i = 0; i < 5; i++) {
    ts_plan_link *m = &r->media[i];
    if (i < 3) m->links = r->cables[i];
    else m->links = r->planes[i - 3].cables[0] + r->planes[i - 3].cables[1] +
                    r->planes[i - 3].cables[2];
    if (!m->links) continue;
    uint32_t far = i == 0 ? r->leaves_per_rail : i < 3 ? cage : 1;
    if (choose(c, r->port_speed, cage, far, m, priced))
      plan_note(r, "no catalog medium reaches %.1f m at %g Gb/s (%s links): "
                "their power and cost are unknown", m->length_m,
                r->port_speed * 8 / 1e9, i == 0 ? "node-leaf" : i == 1
                ? "leaf-spine" : i == 2 ? "spine-core" : "plane");
  }
}

/* ---- power and cost ---- */

static void power(const ts_plan_request *q, const cat_switch *sw,
                  ts_plan_result *r) {
  ts_plan_layout *L = &r->layout;
  uint64_t switches = 0;
  for (int i = 0; i < 3; i++) switches += r->tier[i].switches;
  for (int i = 0; i < 2; i++)
    switches += (uint64_t)r->planes[i].leaves + r->planes[i].spines +
                r->planes[i].cores;
  L->switch_power_known = sw && sw->power >= 0;
  L->switch_power_w = L->switch_power_known ? sw->power : 0;
  L->power_nodes_w = (double)r->nodes * known(L->node_power_w);
  L->power_switches_w = (double)switches * L->switch_power_w;
  for (int i = 0; i < 5; i++) L->power_optics_w += r->media[i].power_w;
  L->power_total_w = L->power_nodes_w + L->power_switches_w + L->power_optics_w;
  L->rack_power_w = L->nodes_per_rack * known(L->node_power_w);
  if (r->nodes < L->nodes_per_rack)
    L->rack_power_w = r->nodes * known(L->node_power_w);
  /* a leaf's share: its node-leaf modules and its end of leaf-spine links */
  uint32_t leaves = r->tier[0].switches;
  double per_leaf = L->switch_power_w;
  if (leaves)
    per_leaf += (r->media[0].power_a_w + r->media[1].power_a_w) / leaves;
  uint32_t leaves_su = leaves / r->sus, u = L->switch_units;
  uint32_t per_rack = (q->rack_units ? q->rack_units : 42) / (u ? u : 1);
  L->network_rack_power_w = (leaves_su < per_rack ? leaves_su : per_rack) *
                            per_leaf;
  uint32_t su_nodes = r->nodes < r->nodes_per_su ? r->nodes : r->nodes_per_su;
  L->row_power_w = su_nodes * known(L->node_power_w) + leaves_su * per_leaf;
  if (!L->switch_power_known)
    plan_note(r, "switch power unknown: the catalog states none for %s "
              "(give --catalog FILE with `power:`); totals exclude switches",
              L->switch_model[0] ? L->switch_model : "this radix and speed");
}

static void cost(const cat_switch *sw, ts_plan_result *r) {
  ts_plan_layout *L = &r->layout;
  double price = sw && sw->price >= 0 ? sw->price : 0;
  L->priced |= sw && sw->price >= 0;
  for (int i = 0; i < 3; i++)
    L->cost_tier[i] = r->tier[i].switches * price + r->media[i].cost;
  for (int i = 0; i < 2; i++) {
    r->planes[i].cost = (double)(r->planes[i].leaves + r->planes[i].spines +
                                 r->planes[i].cores) * price +
                        r->media[3 + i].cost;
    L->cost_planes += r->planes[i].cost;
  }
  L->cost_total = L->cost_tier[0] + L->cost_tier[1] + L->cost_tier[2] +
                  L->cost_planes;
  L->cost_per_gpu = r->gpus ? L->cost_total / r->gpus : 0;
}

int plan_layout(const ts_plan_request *q, const plan_tmpl *t,
                ts_plan_result *r, ts_diag *d) {
  plan_catalog *c = calloc(1, sizeof *c);
  if (!c) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  int rc = plan_catalog_load(q->catalog, c, d);
  uint32_t split = 1;
  const cat_switch *sw = NULL;
  if (!rc) {
    sw = plan_catalog_switch(c, q->switch_model, q->radix, r->port_speed,
                             &split);
    if (!sw && q->switch_model)
      rc = PLAN_ERR(d, "switch '%s' is not in the catalog", q->switch_model);
  }
  if (!rc) rc = rack_nodes(q, t, r, d);
  if (!rc) rc = plan_planes(q, r, d);
  if (!rc) {
    ts_plan_layout *L = &r->layout;
    snprintf(L->switch_model, sizeof L->switch_model, "%s", sw ? sw->name : "");
    L->switch_units = sw && sw->units ? sw->units : 1;
    if (!sw)
      plan_note(r, "no catalog switch has %u ports at %g Gb/s: switch power "
                "and cost unknown", q->radix, r->port_speed * 8 / 1e9);
    racks_rows(q, r);
    lengths(q, r);
    media(c, sw, r);
    power(q, sw, r);
    cost(sw, r);
  }
  free(c);
  return rc;
}
