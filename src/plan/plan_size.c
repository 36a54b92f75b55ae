/* plan_size.c - request -> sizing input -> shape (ts_plan_compute), and the
 * reference-design presets.
 *
 * The design rules live in topo_clos_size (src/topo/topo_clos.c); this file
 * only prepares its input:
 *   - leaf split: reserved ports come off the radix first; the rest splits
 *     down:up in the requested ratio a:b as down = a*m, up = b*m with the
 *     largest m such that (a+b)*m fits. Ports left over stay free (noted).
 *     Impossible: m == 0 (the ratio needs more ports than the leaf has);
 *     a leaf whose down ports cannot hold one SU fails in the rules;
 *   - spine split (three tiers only): the same on the full spine radix;
 *   - one tier: the leaf's whole radix (minus reserved) faces the nodes and
 *     all nodes form one SU unless --nodes-per-su says otherwise;
 *   - nodes per SU defaults to the leaf's down ports;
 *   - GPUs that are not a multiple of GPUs per node round up to whole nodes
 *     (noted in the result).
 * Tiers: min_tiers..max_tiers in order, the first that sizes wins; if none
 * does, the message of the last attempt is returned (TS_EUSAGE: the request
 * cannot be built). Cost: O(tiers * radix). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

#define PLAN_ERR(d, ...) ts_diag_set((d), TS_EUSAGE, NULL, 0, 0, __VA_ARGS__)
#define GBPS (1e9 / 8)

typedef struct preset {
  const char *name;
  const char *tmpl;
  uint32_t radix, per_su;
  double speed;
  uint32_t leaves_per_rail, per_rack;
} preset;

/* Sources in docs/planning.md ("Presets"). */
static const preset presets[] = {
    /* NVIDIA DGX SuperPOD RA, DGX A100: 20-node SU, QM8700 HDR. */
    {"a100-superpod", "dgx-a100", 40, 20, 200 * GBPS, 1, 0},
    /* NVIDIA DGX SuperPOD RA featuring DGX H100: 32-node SU, QM9700 NDR. */
    {"h100-superpod", "dgx-h100", 64, 32, 400 * GBPS, 1, 0},
    /* NVIDIA DGX SuperPOD RA featuring DGX B200 (RA-11334-00): 32-node SU,
     * QM9700 NDR; DGX B200 is an HGX B200 board. */
    {"b200-superpod", "hgx-b200", 64, 32, 400 * GBPS, 1, 0},
    /* NVIDIA DGX SuperPOD with DGX B300 systems, Spectrum-4 Ethernet, DC
     * busbar RA, Table 3: 64-node SU, 16 leaves and 8 spines per SU (two
     * leaves per rail: each 800G NIC port runs as 2 x 400G, one per plane);
     * SN5600 64 x 800G = 128 x 400G ports; four DGX B300 per rack. */
    {"b300-superpod", "hgx-b300", 128, 64, 400 * GBPS, 2, 4},
    /* NVIDIA DGX SuperPOD with DGX B300, Quantum-X800 InfiniBand, AC power
     * RA (RA-11339), Table 3: 72-node SU, 8 leaves and 4 spines per SU, 576
     * + 576 cables: 144-port XDR switches; four DGX B300 per rack. */
    {"b300-xdr-superpod", "hgx-b300", 144, 72, 800 * GBPS, 1, 4},
};

const char *ts_plan_preset_names(void) {
  return "a100-superpod, h100-superpod, b200-superpod, b300-superpod, "
         "b300-xdr-superpod";
}

void ts_plan_request_init(ts_plan_request *req) {
  memset(req, 0, sizeof *req);
  req->template_name = "dgx-a100";
  req->radix = 40;
  req->transceivers_per_cable = 2;
}

int ts_plan_preset(const char *name, ts_plan_request *req, ts_diag *d) {
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    if (strcmp(presets[i].name, name)) continue;
    req->template_name = presets[i].tmpl;
    req->radix = presets[i].radix;
    req->nodes_per_su = presets[i].per_su;
    req->port_speed = presets[i].speed;
    req->leaves_per_rail = presets[i].leaves_per_rail;
    req->nodes_per_rack = presets[i].per_rack;
    req->min_tiers = 2; /* SuperPODs always install spines (docs) */
    return 0;
  }
  return PLAN_ERR(d, "unknown preset '%s'; presets: %s", name,
                  ts_plan_preset_names());
}

void plan_note(ts_plan_result *r, const char *fmt, ...) {
  if (r->note_count >= sizeof r->notes / sizeof r->notes[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->notes[r->note_count++], sizeof r->notes[0], fmt, ap);
  va_end(ap);
}

/* down = a*m, up = b*m with the largest m fitting `ports`. */
static int split(const char *tier, uint32_t ports, const uint32_t ratio[2],
                 ts_plan_tier *t, ts_plan_result *r, ts_diag *d) {
  uint32_t a = ratio[0] ? ratio[0] : 1, b = ratio[1] ? ratio[1] : 1;
  if (!ratio[0] != !ratio[1] || (uint64_t)a + b > ports)
    return PLAN_ERR(d, "%s of %u usable ports cannot split %u:%u (needs at "
                    "least %llu ports)", tier, ports, a, b,
                    (unsigned long long)a + b);
  uint32_t m = ports / (a + b);
  t->down = a * m;
  t->up = b * m;
  if (ports - (a + b) * m)
    plan_note(r, "%s: %u:%u split uses %u down + %u up; %u port(s) stay "
              "free", tier, a, b, t->down, t->up, ports - (a + b) * m);
  return 0;
}

static int check_request(const ts_plan_request *q, ts_diag *d) {
  if (!q->gpus == !q->nodes)
    return PLAN_ERR(d, q->gpus ? "give --gpus or --nodes, not both"
                               : "give a size: --gpus N or --nodes N (N > 0)");
  if (q->radix < 2 || q->radix > 65535)
    return PLAN_ERR(d, "radix %u is out of range (2..65535)", q->radix);
  if (q->reserved_ports >= q->radix)
    return PLAN_ERR(d, "%u reserved ports leave nothing of a %u-port leaf",
                    q->reserved_ports, q->radix);
  uint32_t lo = q->min_tiers ? q->min_tiers : 1;
  uint32_t hi = q->max_tiers ? q->max_tiers : 3;
  if (lo > 3 || hi > 3 || lo > hi)
    return PLAN_ERR(d, "tiers must lie in 1..3 with min <= max (got %u..%u)",
                    lo, hi);
  if (q->port_speed < 0) return PLAN_ERR(d, "port speed must be positive");
  if (q->leaves_per_rail > 16)
    return PLAN_ERR(d, "%u leaves per rail is out of range (1..16)",
                    q->leaves_per_rail);
  return 0;
}

/* Nodes, GPUs, rails and splits: everything the rules need. */
static int plan_setup(const ts_plan_request *q, const plan_tmpl *t,
                      ts_plan_result *r, ts_diag *d) {
  r->gpus_per_node = t->gpus;
  r->rails = q->rails ? q->rails : t->rails;
  r->port_speed = q->port_speed > 0 ? q->port_speed : t->speed;
  r->efficiency = t->efficiency;
  r->gpus_requested = q->gpus ? q->gpus : q->nodes * t->gpus;
  r->nodes = q->nodes ? q->nodes
                      : (uint32_t)(((uint64_t)q->gpus + t->gpus - 1) / t->gpus);
  r->gpus = r->nodes * t->gpus;
  if (q->gpus && r->gpus != q->gpus)
    plan_note(r, "%u GPUs is not a multiple of %u GPUs per node: rounded up "
              "to %u nodes (%u GPUs)", q->gpus, t->gpus, r->nodes, r->gpus);
  snprintf(r->template_name, sizeof r->template_name, "%s", t->name);
  snprintf(r->gpu_model, sizeof r->gpu_model, "%s", t->model);
  snprintf(r->technology, sizeof r->technology, "%s", t->technology);
  for (int i = 0; i < 3; i++) r->tier[i].radix = q->radix;
  int rc = split("leaf", q->radix - q->reserved_ports, q->oversub[0],
                 &r->tier[TS_PLAN_LEAF], r, d);
  return rc ? rc : split("spine", q->radix, q->oversub[1],
                         &r->tier[TS_PLAN_SPINE], r, d);
}

void plan_clos_in(const ts_plan_request *q, const ts_plan_result *r,
                  uint32_t tiers, topo_clos_in *in) {
  const ts_plan_tier *lf = &r->tier[TS_PLAN_LEAF], *sp = &r->tier[TS_PLAN_SPINE];
  memset(in, 0, sizeof *in);
  in->hosts = r->nodes;
  in->rails = r->rails;
  in->tiers = tiers;
  in->hosts_per_su = q->nodes_per_su ? q->nodes_per_su
                                     : tiers == 1 ? 0 : lf->down;
  in->leaf = (topo_switch_spec){q->radix, lf->down, lf->up};
  if (tiers == 1) in->leaf = (topo_switch_spec){q->radix - q->reserved_ports, 0, 0};
  in->spine = (topo_switch_spec){q->radix, 0, 0};
  if (tiers == 3) in->spine = (topo_switch_spec){q->radix, sp->down, sp->up};
  in->core = (topo_switch_spec){q->radix, 0, 0};
}

/* Fewest tiers in min..max that size; *in and *s describe the winner. */
static int choose_tiers(const ts_plan_request *q, ts_plan_result *r,
                        topo_clos_shape *s, ts_diag *d) {
  uint32_t lo = q->min_tiers ? q->min_tiers : 1;
  uint32_t hi = q->max_tiers ? q->max_tiers : 3;
  int rc = 0;
  for (uint32_t k = lo; k <= hi; k++) {
    topo_clos_in in;
    plan_clos_in(q, r, k, &in);
    ts_diag_clear(d);
    rc = topo_clos_size(&in, s, d);
    if (rc) continue;
    r->tiers = k;
    r->nodes_per_su = in.hosts_per_su ? in.hosts_per_su : r->nodes;
    return 0;
  }
  char why[sizeof d->msg];
  snprintf(why, sizeof why, "%s", d->msg);
  return PLAN_ERR(d, "%u nodes cannot be built in %s%u tier%s: %s", r->nodes,
                  lo == hi ? "" : "at most ", hi, hi > 1 ? "s" : "", why);
}

/* k leaves per rail: each NIC becomes k ports of speed/k (the template is
 * reloaded with rails x k NICs at that speed), so the rules see rails x k
 * rails and the emitted file has the same NIC ports. */
static int split_rails(const ts_plan_request *q, uint32_t k, plan_tmpl *t,
                       ts_plan_request *q2, ts_diag *d) {
  uint32_t rails = (q->rails ? q->rails : t->rails);
  double speed = q->port_speed > 0 ? q->port_speed : t->speed / k;
  if ((uint64_t)rails * k > 4096)
    return PLAN_ERR(d, "%u rails x %u leaves per rail is too many", rails, k);
  q2->rails = rails * k;
  q2->port_speed = speed;
  plan_tmpl_free(t);
  return plan_tmpl_load(q->template_name, q2->rails, speed, t, d);
}

int ts_plan_compute(const ts_plan_request *q, ts_plan_result *out,
                    ts_diag *d) {
  memset(out, 0, sizeof *out);
  int rc = check_request(q, d);
  if (rc) return rc;
  plan_tmpl *t = calloc(1, sizeof *t);
  if (!t) return ts_diag_set(d, TS_ENOMEM, NULL, 0, 0, "out of memory");
  ts_plan_request q2 = *q;
  rc = plan_tmpl_load(q->template_name, q->rails, q->port_speed, t, d);
  uint32_t k = q->leaves_per_rail ? q->leaves_per_rail : 1, nic_rails = 0;
  if (!rc) nic_rails = q->rails ? q->rails : t->rails;
  if (!rc && k > 1) rc = split_rails(q, k, t, &q2, d);
  if (!rc && (uint64_t)q->nodes * t->gpus > UINT32_MAX / 2)
    rc = PLAN_ERR(d, "%u nodes is too many", q->nodes);
  if (!rc) rc = plan_setup(&q2, t, out, d);
  topo_clos_shape s;
  if (!rc) rc = choose_tiers(&q2, out, &s, d);
  out->leaves_per_rail = k;
  out->nic_rails = nic_rails;
  if (!rc) {
    plan_bom(&q2, &s, out);
    rc = plan_layout(&q2, t, out, d);
  }
  if (rc) {
    plan_tmpl_free(t);
    free(t);
    memset(out, 0, sizeof *out);
    return rc;
  }
  out->priv = t;
  return 0;
}

void ts_plan_free(ts_plan_result *r) {
  if (!r || !r->priv) return;
  plan_tmpl_free(r->priv);
  free(r->priv);
  r->priv = NULL;
}
