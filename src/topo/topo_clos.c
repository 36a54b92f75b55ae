/* topo_clos.c - sizing rules of the rail-optimized Clos (topo_clos_size).
 *
 * The rules below derive NVIDIA's DGX A100 SuperPOD table (40-port HDR
 * QM8700 switches split 20 down / 20 up, 20 nodes per SU, 8 rails):
 *
 *   nodes  SUs  leaf  spine  core  tiers
 *     10   0.5     8      2     0      2
 *     20     1     8      4     0      2
 *     40     2    16     10     0      2
 *     80     4    32     20     0      2
 *    100     5    40     20     0      2
 *    120     6    48     80    24      3
 *    140     7    56     80    28      3
 *
 * Rules (integer arithmetic; ceil(a/b) rounds up):
 *   1. sus = ceil(hosts / hosts_per_su) (hosts_per_su 0 = all hosts in one
 *      SU); leaves = sus * rails: one leaf per rail per SU, and a partial SU
 *      still gets its full set of leaves.
 *   2. leaf_down_used = min(hosts, hosts_per_su): NIC ports on the fullest
 *      leaf. It must fit leaf.down (the whole radix with one tier).
 *      A non-top tier whose spec leaves down and up both 0 splits its radix
 *      1:1 (radix/2 down, radix/2 up).
 *   3. One tier: sus must be 1 (every host on the one leaf of its rail); no
 *      spines, no cores.
 *   4. leaf_up = ceil(leaf_down_used * leaf.up / leaf.down): a partial SU
 *      keeps the leaf's ratio (10 nodes on a 20:20 leaf -> 10 uplinks).
 *   5. Two tiers: every leaf reaches every spine with the same number of
 *      cables. spines = the fewest s >= ceil(leaves * leaf_up / spine.radix)
 *      with leaf_up % s == 0; leaf_spine_links = leaf_up / s. When no such
 *      s <= leaf_up exists the leaves need a third tier (error).
 *      spine_groups = 1.
 *   6. Three tiers. spine_down = spine.down if set, else radix/2. A rail
 *      group of s spines (s | leaf_up, one leaf per SU sending leaf_up / s
 *      cables to each) serves at most spine_down * s / leaf_up SUs, so one
 *      group per rail is enough exactly when sus <= spine_down (s = leaf_up).
 *      a. One pod (sus <= spine_down): pods = 1; spine_groups = rails; the
 *         leaves of one rail reach only that rail's group. spines_per_group
 *         = the fewest s >= ceil(sus * leaf_up / spine_down) with leaf_up %
 *         s == 0; spine_down_used = sus * leaf_up / s.
 *      b. Pods (folded Clos, sus > spine_down): sus_per_pod = spine_down
 *         (the most SUs a group can serve: s = leaf_up, one cable per
 *         leaf-spine pair); pods = ceil(sus / sus_per_pod), SU u in pod
 *         u / sus_per_pod (the last pod may be partial); spine_groups =
 *         pods * rails, one per (pod, rail), group id pod * rails + rail;
 *         leaf (u, r) reaches only group (u / sus_per_pod, r).
 *         spines_per_group = leaf_up, leaf_spine_links = 1, spine_down_used
 *         = sus_per_pod (SUs of the fullest pod).
 *      Both: spine_up = ceil(spine_down_used * spine.up / spine.down) (1:1
 *      by default, so = spine_down_used). Two tiers and one tier have one
 *      pod of all SUs.
 *   7. Cores: core_groups K = ceil(spines / core.radix): each core takes one
 *      cable from every spine of its core group. Spine j of every spine
 *      group (every rail of every pod) belongs to core group floor(j * K /
 *      spines_per_group), so each core group sees every pod and rail (full
 *      reachability, balanced ECMP) and holds at most ceil(spines_per_group
 *      / K) * spine_groups spines; if that exceeds core.radix K grows by
 *      one until it fits (never for the table above). cores_per_group =
 *      spine_up and spine_core_links = 1 (each spine sends one cable to
 *      each core of its group); cores = K * cores_per_group. Error if
 *      spines_per_group < K, or if spine_groups > core.radix (a core cannot
 *      see every group: bigger cores or a fourth tier).
 *   8. Nonzero spines / cores in the input force the count; it must still
 *      split evenly: forced spines must divide leaf_up (and, with three
 *      tiers, be a multiple of rails; with pods, equal pods * rails *
 *      leaf_up); forced cores must be a multiple of K whose per-group count
 *      divides spine_up (spine_core_links = spine_up / cores_per_group).
 *      Every forced shape is checked against the radix.
 *
 * Worked pod example: 16,384 nodes x 8 rails, 64 nodes per SU, leaves 128
 * ports split 64/64, spines 128 split 64/64, cores 128. sus = 256, leaves
 * = 2048, leaf_up = 64; 256 SUs > spine_down 64, so pods = 4 of 64 SUs;
 * spines = 4 x 8 groups of 64 = 2048, 1 cable per leaf-spine pair,
 * spine_down_used = spine_up = 64; K = ceil(2048 / 128) = 16 (4 spines of
 * each of 32 groups = 128 ports per core), cores = 16 x 64 = 1024. Total
 * 5,120 switches, every switch port used: 131,072 NIC links + 2048 x 64 =
 * 131,072 leaf-spine cables + 2048 x 64 = 131,072 spine-core cables.
 *
 * Messages say what failed and by how much. Cost: O(radix) for the even-
 * split searches; no allocation. */
#include "topo/topo_gen.h"

/* Radixes above this cannot be stored as a link width (uint16_t). */
#define CLOS_MAX_RADIX 65535u
/* Refuse shapes whose switch count alone would exhaust memory. */
#define CLOS_MAX_SWITCHES (1u << 24)

/* Sizing errors carry no position: the generator or planner adds theirs. */
#define CLOS_ERR(d, ...) ts_diag_set((d), TS_ESCHEMA, NULL, 0, 0, __VA_ARGS__)

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Fewest s in [max(lo, 1), up] with up % s == 0, or 0 when none exists. */
static uint32_t even_split(uint32_t up, uint64_t lo) {
  for (uint64_t s = lo ? lo : 1; s <= up; s++)
    if (up % s == 0) return (uint32_t)s;
  return 0;
}

static int check_spec(const char *tier, const topo_switch_spec *s,
                      ts_diag *d) {
  if (s->radix == 0) return CLOS_ERR(d, "%s radix is 0", tier);
  if (s->radix > CLOS_MAX_RADIX)
    return CLOS_ERR(d, "%s radix %u is over the %u-port limit", tier, s->radix,
                    CLOS_MAX_RADIX);
  if ((uint64_t)s->down + s->up > s->radix)
    return CLOS_ERR(d, "%s radix %u: %u down + %u up ports exceed it by %llu",
                    tier, s->radix, s->down, s->up,
                    (unsigned long long)s->down + s->up - s->radix);
  return 0;
}

static int check_input(const topo_clos_in *in, ts_diag *d) {
  if (in->hosts == 0) return CLOS_ERR(d, "no hosts to connect (hosts is 0)");
  if (in->rails == 0) return CLOS_ERR(d, "hosts have no NICs (rails is 0)");
  if (in->tiers < 1 || in->tiers > 3)
    return CLOS_ERR(d, "tiers must be 1, 2 or 3, not %u", in->tiers);
  int rc = check_spec("leaf", &in->leaf, d);
  if (!rc && in->tiers >= 2) rc = check_spec("spine", &in->spine, d);
  if (!rc && in->tiers == 3) rc = check_spec("core", &in->core, d);
  return rc;
}

/* Down/up ports of a non-top tier (rule 2: 0/0 splits the radix 1:1). */
static void split(const topo_switch_spec *s, uint32_t *down, uint32_t *up) {
  *down = s->down;
  *up = s->up;
  if (!s->down && !s->up) *down = *up = s->radix / 2;
}

/* Rule 3: the single tier's leaves take the whole radix. */
static int size_one_tier(const topo_clos_in *in, const topo_clos_shape *o,
                         ts_diag *d) {
  if (o->sus > 1)
    return CLOS_ERR(d, "one tier holds one SU per rail, but %u hosts make %u "
                    "SUs of %u (%u too many): add a tier",
                    in->hosts, o->sus, o->leaf_down_used, o->sus - 1);
  if (o->leaf_down_used > in->leaf.radix)
    return CLOS_ERR(d, "leaf radix %u cannot hold %u hosts on one leaf per "
                    "rail (%u ports short)", in->leaf.radix,
                    o->leaf_down_used, o->leaf_down_used - in->leaf.radix);
  return 0;
}

/* Rules 1-4. */
static int size_leaves(const topo_clos_in *in, topo_clos_shape *o,
                       ts_diag *d) {
  uint32_t per_su = in->hosts_per_su ? in->hosts_per_su : in->hosts;
  o->sus = (uint32_t)ceil_div(in->hosts, per_su);
  if ((uint64_t)o->sus * in->rails > CLOS_MAX_SWITCHES)
    return CLOS_ERR(d, "%u SUs x %u rails is over the %u-leaf limit", o->sus,
                    in->rails, CLOS_MAX_SWITCHES);
  o->leaves = o->sus * in->rails;
  o->pods = 1;
  o->sus_per_pod = o->sus;
  o->leaf_down_used = in->hosts < per_su ? in->hosts : per_su;
  if (in->tiers == 1) return size_one_tier(in, o, d);
  uint32_t down, up;
  split(&in->leaf, &down, &up);
  if (o->leaf_down_used > down)
    return CLOS_ERR(d, "leaf radix %u with %u down ports cannot hold a "
                    "%u-node SU (%u ports short)", in->leaf.radix, down,
                    o->leaf_down_used, o->leaf_down_used - down);
  if (!up || !down)
    return CLOS_ERR(d, "leaf radix %u split %u down / %u up leaves no %s "
                    "ports for %u tiers", in->leaf.radix, down, up,
                    up ? "down" : "up", in->tiers);
  o->leaf_up = (uint32_t)ceil_div((uint64_t)o->leaf_down_used * up, down);
  return 0;
}

/* Rule 5 (and rule 8 for forced spines). */
static int size_two_tiers(const topo_clos_in *in, topo_clos_shape *o,
                          ts_diag *d) {
  uint64_t cables = (uint64_t)o->leaves * o->leaf_up;
  uint64_t need = ceil_div(cables, in->spine.radix);
  uint32_t s = in->spines;
  if (!s) {
    s = even_split(o->leaf_up, need);
    if (!s)
      return CLOS_ERR(d, "%u leaves need a third tier: their %llu uplinks "
                      "need %llu spines of radix %u, but %u uplinks per leaf "
                      "split evenly over at most %u spines (%llu short)",
                      o->leaves, (unsigned long long)cables,
                      (unsigned long long)need, in->spine.radix, o->leaf_up,
                      o->leaf_up, (unsigned long long)need - o->leaf_up);
  } else if (o->leaf_up % s) {
    return CLOS_ERR(d, "%u spines do not split each leaf's %u uplinks evenly "
                    "(%u left over)", s, o->leaf_up, o->leaf_up % s);
  } else if (s < need) {
    return CLOS_ERR(d, "%u spines of radix %u cannot take %llu leaf uplinks "
                    "(%llu spines needed)", s, in->spine.radix,
                    (unsigned long long)cables, (unsigned long long)need);
  }
  o->spine_groups = 1;
  o->spines_per_group = o->spines = s;
  o->leaf_spine_links = o->leaf_up / s;
  o->spine_down_used = o->leaves * o->leaf_spine_links;
  return 0;
}

/* Spine-tier fields both rule-6 branches share: s spines in each of the
 * pods * rails groups, per_pod SUs in the fullest pod. */
static int set_spine_groups(const topo_clos_in *in, topo_clos_shape *o,
                            uint32_t pods, uint32_t per_pod, uint32_t s,
                            ts_diag *d) {
  uint64_t groups = (uint64_t)pods * in->rails;
  if (groups * s > CLOS_MAX_SWITCHES)
    return CLOS_ERR(d, "%u spines x %llu groups is over the %u-switch limit",
                    s, (unsigned long long)groups, CLOS_MAX_SWITCHES);
  o->pods = pods;
  o->sus_per_pod = per_pod;
  o->spine_groups = (uint32_t)groups;
  o->spines_per_group = s;
  o->spines = (uint32_t)groups * s;
  o->leaf_spine_links = o->leaf_up / s;
  o->spine_down_used = o->sus_per_pod * o->leaf_spine_links;
  return 0;
}

/* Rule 6, one pod: spines of one rail group (forced: in->spines / rails).
 * Called only with sus <= spine_down, so s = leaf_up always fits. */
static int size_one_pod(const topo_clos_in *in, topo_clos_shape *o,
                        uint32_t spine_down, ts_diag *d) {
  uint64_t cables = (uint64_t)o->sus * o->leaf_up;
  uint64_t need = ceil_div(cables, spine_down);
  uint32_t s = in->spines / in->rails;
  if (!in->spines) {
    s = even_split(o->leaf_up, need);
  } else if (in->spines % in->rails || !s || o->leaf_up % s) {
    return CLOS_ERR(d, "%u spines do not split into %u rail groups that "
                    "divide each leaf's %u uplinks evenly", in->spines,
                    in->rails, o->leaf_up);
  } else if (s < need) {
    return CLOS_ERR(d, "%u spines per rail group with %u down ports cannot "
                    "take %llu leaf uplinks (%llu needed)", s, spine_down,
                    (unsigned long long)cables, (unsigned long long)need);
  }
  return set_spine_groups(in, o, 1, o->sus, s, d);
}

/* Rule 6, pods: a group of leaf_up spines serves spine_down SUs with one
 * cable per leaf-spine pair; SUs fill pods in order (the last may be
 * partial). Filling rather than balancing keeps growth to adding SUs to
 * the last pod without recabling the others; balancing (ceil(sus / pods)
 * per pod) would lower spine_up and the core count for a partial last pod. */
static int size_pods(const topo_clos_in *in, topo_clos_shape *o,
                     uint32_t spine_down, ts_diag *d) {
  uint32_t pods = (uint32_t)ceil_div(o->sus, spine_down);
  uint64_t want = (uint64_t)pods * in->rails * o->leaf_up;
  if (in->spines && in->spines != want)
    return CLOS_ERR(d, "%u spines forced, but %u SUs make %u pods of %u: "
                    "%u pods x %u rails x %u spines = %llu are needed",
                    in->spines, o->sus, pods, spine_down, pods, in->rails,
                    o->leaf_up, (unsigned long long)want);
  return set_spine_groups(in, o, pods, spine_down, o->leaf_up, d);
}

/* Rule 7: fewest core groups K whose largest group fits a core. */
static int size_core_groups(const topo_clos_in *in, topo_clos_shape *o,
                            ts_diag *d) {
  uint32_t spg = o->spines_per_group, groups = o->spine_groups;
  uint32_t k = (uint32_t)ceil_div(o->spines, in->core.radix);
  if (groups > in->core.radix)
    return CLOS_ERR(d, "core radix %u cannot take one cable from a spine of "
                    "each of the %u spine groups (%u pods x %u rails; %u "
                    "ports short): use bigger cores or a fourth tier",
                    in->core.radix, groups, o->pods, in->rails,
                    groups - in->core.radix);
  while (k < spg && ceil_div(spg, k) * groups > in->core.radix) k++;
  if (spg < k)
    return CLOS_ERR(d, "%u spines need %u core groups of radix-%u cores, but "
                    "a spine group has only %u spines to spread over them "
                    "(%u short)", o->spines, k, in->core.radix, spg, k - spg);
  o->core_groups = k;
  return 0;
}

/* Rule 7 (and rule 8 for forced cores): cores per group, cables each. */
static int size_cores(const topo_clos_in *in, topo_clos_shape *o, ts_diag *d) {
  uint32_t k = o->core_groups, cpg = o->spine_up;
  if (in->cores) {
    cpg = in->cores / k;
    if (in->cores % k || !cpg || o->spine_up % cpg)
      return CLOS_ERR(d, "%u cores do not split into %u core groups that "
                      "divide each spine's %u uplinks evenly", in->cores, k,
                      o->spine_up);
  }
  o->cores_per_group = cpg;
  o->cores = k * cpg;
  o->spine_core_links = o->spine_up / cpg;
  uint64_t used =
      ceil_div(o->spines_per_group, k) * o->spine_groups * o->spine_core_links;
  if (used > in->core.radix)
    return CLOS_ERR(d, "%u cores of radix %u would each take %llu spine "
                    "cables (%llu over)", o->cores, in->core.radix,
                    (unsigned long long)used,
                    (unsigned long long)used - in->core.radix);
  return 0;
}

/* Rules 6-7. */
static int size_three_tiers(const topo_clos_in *in, topo_clos_shape *o,
                            ts_diag *d) {
  uint32_t down, up;
  split(&in->spine, &down, &up);
  if (!up || !down)
    return CLOS_ERR(d, "spine radix %u split %u down / %u up leaves no %s "
                    "ports for three tiers", in->spine.radix, down, up,
                    up ? "down" : "up");
  int rc = o->sus <= down ? size_one_pod(in, o, down, d)
                          : size_pods(in, o, down, d);
  if (rc) return rc;
  o->spine_up = (uint32_t)ceil_div((uint64_t)o->spine_down_used * up, down);
  rc = size_core_groups(in, o, d);
  return rc ? rc : size_cores(in, o, d);
}

int topo_clos_size(const topo_clos_in *in, topo_clos_shape *out, ts_diag *d) {
  topo_clos_shape o = {0};
  int rc = check_input(in, d);
  if (!rc) rc = size_leaves(in, &o, d);
  if (!rc && in->tiers == 2) rc = size_two_tiers(in, &o, d);
  if (!rc && in->tiers == 3) rc = size_three_tiers(in, &o, d);
  if (!rc && (uint64_t)o.leaves + o.spines + o.cores > CLOS_MAX_SWITCHES)
    rc = CLOS_ERR(d, "%u leaves + %u spines + %u cores is over the %u-switch "
                  "limit", o.leaves, o.spines, o.cores, CLOS_MAX_SWITCHES);
  if (!rc) *out = o;
  return rc;
}
