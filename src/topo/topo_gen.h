/* topo_gen.h - fabric generators and the Clos sizing rules they share with
 * the planner.
 *
 * Each generator adds switches (ts_node kind TS_NODE_SWITCH, or
 * TS_NODE_NVSWITCH for nvlink_domain) and links to an existing plane of t,
 * attaching the NICs (or GPUs) already instantiated on that plane. They run
 * before topo_finalize, so they scan t->nodes directly. All return 0 or
 * TS_ESCHEMA/TS_ENOMEM with d set (file:line:col of the plane's generator,
 * from t->plane_marks[plane]). */
#ifndef TOPSIM_TOPO_GEN_H
#define TOPSIM_TOPO_GEN_H

#include <stdint.h>

#include "topo/topo_graph.h"

/* Port budget of one switch model in one tier. down + up <= radix; when both
 * are 0 the whole radix faces down (a top tier). */
typedef struct topo_switch_spec {
  uint32_t radix;
  uint32_t down, up;
} topo_switch_spec;

/* Inputs of the rail-optimized Clos sizing rules (see docs/planning.md). */
typedef struct topo_clos_in {
  uint32_t hosts;          /* nodes attached */
  uint32_t rails;          /* NICs per node on this plane */
  uint32_t hosts_per_su;   /* scalable-unit size in nodes */
  uint32_t tiers;          /* 1, 2 or 3 */
  topo_switch_spec leaf, spine, core;
  uint32_t spines;         /* 0 = fewest by the rules, else forced */
  uint32_t cores;          /* 0 = fewest by the rules, else forced */
} topo_clos_in;

/* Shape the rules produce. */
typedef struct topo_clos_shape {
  uint32_t sus;                /* ceil(hosts / hosts_per_su) */
  uint32_t leaves;             /* sus * rails */
  uint32_t leaf_down_used;     /* NIC ports used on the fullest leaf */
  uint32_t leaf_up;            /* uplinks per leaf */
  uint32_t pods;               /* 1 unless three tiers need several */
  uint32_t sus_per_pod;        /* SUs in the fullest pod (sus with 1 pod);
                                  SU u is in pod u / sus_per_pod */
  uint32_t spine_groups;       /* 1 for two tiers; pods * rails for three,
                                  group id pod * rails + rail */
  uint32_t spines_per_group;
  uint32_t spines;             /* spine_groups * spines_per_group */
  uint32_t leaf_spine_links;   /* cables between a leaf and each spine */
  uint32_t spine_down_used;
  uint32_t spine_up;           /* uplinks per spine (three tiers) */
  uint32_t core_groups;
  uint32_t cores_per_group;
  uint32_t cores;
  uint32_t spine_core_links;   /* cables between a spine and each core */
} topo_clos_shape;

/* Applies the sizing rules. Returns 0, or TS_ESCHEMA with a message in d
 * (position left 0: callers add theirs) when the request cannot be built:
 * leaf too small for an SU, tiers too few for the size, no even split. */
int topo_clos_size(const topo_clos_in *in, topo_clos_shape *out, ts_diag *d);

typedef struct topo_rail_spec {
  topo_clos_in clos;       /* hosts and rails are filled by the generator */
  double link_bw;          /* switch-to-switch cable bytes/s per direction */
  ts_time_ps link_latency; /* per cable traversal (incl. switch hop) */
} topo_rail_spec;

/* rail_optimized: one leaf per rail per SU, leaves to spines (all spines for
 * two tiers; the spine group of the leaf's (pod, rail) for three), spines
 * to cores in core groups. NIC i of every host links to the rail-i leaf of
 * its SU with the NIC's port speed (t->port_bw). Labels: leaf rail/su/tier,
 * spine group (pod * rails + rail)/tier, core group/tier. */
int topo_gen_rail_optimized(ts_topo *t, uint16_t plane,
                            const topo_rail_spec *spec, ts_diag *d);

typedef struct topo_fat_tree_spec {
  uint32_t k;              /* even switch radix; k^3/4 hosts at most */
  double link_bw;
  ts_time_ps link_latency;
} topo_fat_tree_spec;

/* fat_tree: k pods of k/2 edge (leaf) + k/2 aggregation (spine) switches,
 * (k/2)^2 cores; NICs of the plane fill edge ports in order. */
int topo_gen_fat_tree(ts_topo *t, uint16_t plane, const topo_fat_tree_spec *s,
                      ts_diag *d);

typedef struct topo_nvl_spec {
  uint32_t gpus_per_domain; /* e.g. 72 */
  uint32_t switches;        /* NVSwitch chips per domain, e.g. 18 */
  uint32_t links_per_switch;/* NVLinks from each GPU to each chip */
  uint32_t switch_radix;    /* NVLink ports per chip (0 = unlimited) */
  double link_bw;           /* bytes/s per NVLink per direction */
  ts_time_ps link_latency;
  int nvls;                 /* chips reduce in-switch (TS_NODE_F_NVLS) */
} topo_nvl_spec;

/* nvlink_domain: consecutive GPUs (topology order) form domains of
 * gpus_per_domain; each domain gets its own NVSwitch chips, every GPU linked
 * to every chip with links_per_switch NVLinks. */
int topo_gen_nvlink_domain(ts_topo *t, uint16_t plane, const topo_nvl_spec *s,
                           ts_diag *d);

#endif
