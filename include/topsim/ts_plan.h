/* ts_plan.h - capacity planning: size a rail-optimized SU/pod backend fabric
 * from design rules (`topsim plan`).
 *
 * The planner never re-implements the rules: it turns a request (node count,
 * node template, switch model, split, tiers) into the generator's sizing
 * input and calls the same sizing function the rail_optimized generator
 * uses, trying 1, 2, 3 tiers up to max_tiers and keeping the fewest that
 * size. On top of that shape it counts ports, cables and transceivers,
 * computes tier-cut bisection, worst-case switch hops and the impact of one
 * leaf, spine or core failing, and can write the plan as a topology file
 * that `topsim topo` loads into the same fabric. On top of the shape the
 * layout places racks and rows, chooses each link class's medium from a
 * parts catalog by its worst-case length, and adds power and (with
 * prices) cost, storage and frontend planes included. docs/planning.md
 * has the rules, the presets with their sources, the layout model, the
 * catalog format and the failure model.
 *
 * Costs: ts_plan_compute is O(radix) (the even-split searches) plus the
 * template and catalog parses (O(file)); emission is O(template text). */
#ifndef TOPSIM_TS_PLAN_H
#define TOPSIM_TS_PLAN_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_error.h"

/* A request. Zero fields take the defaults listed; ts_plan_request_init
 * writes them, ts_plan_preset overlays a reference design. */
typedef struct ts_plan_request {
  uint32_t gpus;              /* GPUs wanted (rounded up to whole nodes) */
  uint32_t nodes;             /* or nodes; exactly one of gpus/nodes != 0 */
  const char *template_name;  /* built-in name, or "FILE:NAME" */
  uint32_t radix;             /* switch ports (every tier uses one model) */
  double port_speed;          /* bytes/s per port; 0 = the template's NIC */
  uint32_t rails;             /* 0 = the template's compute NICs per node */
  uint32_t nodes_per_su;      /* 0 = the leaf's down ports */
  uint32_t oversub[2][2];     /* [leaf, spine] {down, up}; {0,0} = 1:1 */
  uint32_t min_tiers;         /* 0 = 1 */
  uint32_t max_tiers;         /* 0 = 3 */
  uint32_t reserved_ports;    /* per leaf, e.g. UFM appliance; off the radix */
  uint32_t transceivers_per_cable; /* optical cables; default 2 */
  int copper_node_leaf;       /* node-leaf cables are DAC: no transceivers */
  uint32_t leaves_per_rail;   /* k leaves per rail per SU (0 = 1): each NIC
                                 splits into k ports of speed/k, port p to
                                 leaf p of its rail (twin-plane designs) */
  /* layout (docs/planning.md "Racks, rows, power") */
  const char *catalog;        /* parts catalog file; NULL = bundled */
  const char *switch_model;   /* catalog switch; NULL = match radix/speed */
  uint32_t nodes_per_rack;    /* 0 = from rack_power / rack_units, else 1 */
  double rack_power;          /* W per compute rack; 0 = no limit */
  uint32_t rack_units;        /* usable U per rack (0 = 42) */
  uint32_t node_units;        /* U per node (0 = space not a limit) */
  int leaf_middle_of_row;     /* leaf racks mid-row (default end of row) */
  double rack_width;          /* m, default 0.6 */
  double row_pitch;           /* m between row centres, default 2.4 */
  /* other planes, sized by their own rules (0 NICs = no plane) */
  uint32_t storage_nics;      /* per node on the storage plane */
  uint32_t storage_servers;   /* storage servers (one NIC each) */
  uint32_t storage_oversub[2];/* leaf down:up; {0,0} = 1:1 */
  uint32_t frontend_nics;     /* per node on the frontend plane */
  uint32_t frontend_oversub[2];
} ts_plan_request;

enum { TS_PLAN_LEAF = 0, TS_PLAN_SPINE = 1, TS_PLAN_CORE = 2 };

/* One switch tier of the plan (index TS_PLAN_LEAF..TS_PLAN_CORE). */
typedef struct ts_plan_tier {
  uint32_t switches;
  uint32_t radix;
  uint32_t down, up;          /* design split per switch (up 0: top tier) */
  uint64_t ports_down;        /* used toward NICs / the tier below */
  uint64_t ports_up;          /* used toward the tier above */
  uint64_t ports_reserved;    /* management ports held back (leaves only) */
  uint64_t ports_free;        /* total - used - reserved */
  double oversub;             /* down bandwidth / up bandwidth; 0 at top */
} ts_plan_tier;

/* Effect of one switch of a tier failing (the worst such switch). */
typedef struct ts_plan_failure {
  uint32_t switches_hit;      /* spine: leaves, core: spines losing uplinks */
  double uplink_loss;         /* leaf: 1/rails of each hit node's NIC
                                 bandwidth; else of each hit switch's
                                 uplinks */
  uint32_t nodes_hit;         /* leaf: nodes losing one rail */
  uint32_t gpus_slowed;       /* GPUs whose NIC or path lost capacity */
  uint32_t gpus_cut_off;      /* GPUs losing every fabric path they had to
                                 some other GPU (docs/planning.md) */
  double bisection_after;     /* nominal bytes/s, tier-cut as below */
} ts_plan_failure;

/* How one class of links is built: worst-case length from the layout, the
 * medium chosen for it from the catalog, modules and their power. */
typedef struct ts_plan_link {
  uint64_t links;             /* cables of the class */
  double length_m;            /* worst-case length */
  char medium[48];            /* catalog cable name, "" if none reaches */
  char kind[8];               /* dac, aoc, fiber */
  char optic_a[48], optic_b[48]; /* modules at the switch / far end */
  uint64_t modules_a, modules_b; /* twin-port modules carry two links */
  double power_w;             /* modules + active cable ends */
  double power_a_w;           /* the switch-end share of power_w */
  double cost;                /* cables + modules (prices given) */
} ts_plan_link;

/* Another plane (storage, frontend) sized by topo_clos_size, rails 1. */
typedef struct ts_plan_plane {
  char name[16];
  uint32_t endpoints;         /* NIC ports on the plane */
  uint32_t tiers, leaves, spines, cores;
  uint64_t cables[3];
  double oversub;             /* leaf down:up as built */
  double power_w, cost;       /* switches (+ links in media[]) */
} ts_plan_plane;

typedef struct ts_plan_layout {
  char switch_model[48];      /* catalog switch of the backend fabric */
  int switch_power_known, node_power_known, priced;
  uint32_t nodes_per_rack, compute_racks, network_racks, racks;
  uint32_t rows, racks_per_row;  /* a row = one SU's racks + leaf racks */
  uint32_t switch_units;      /* U of one switch */
  double node_power_w, switch_power_w;  /* one of each */
  double rack_power_w;        /* fullest compute rack */
  double network_rack_power_w;/* fullest leaf rack (switches + modules) */
  double row_power_w;         /* fullest row */
  double power_nodes_w, power_switches_w, power_optics_w, power_total_w;
  double cost_tier[3];        /* switches + links of each backend tier */
  double cost_planes, cost_total, cost_per_gpu;
} ts_plan_layout;

typedef struct ts_plan_result {
  /* what was planned */
  char template_name[64];
  char gpu_model[64];
  char technology[32];        /* network preset of the backend plane or "" */
  double efficiency;          /* achievable fraction of port_speed */
  uint32_t gpus_per_node, rails, nodes, gpus, gpus_requested;
  uint32_t nodes_per_su, sus, last_su_nodes; /* last_su_nodes < per_su: partial */
  double port_speed;          /* bytes/s, nominal */
  uint32_t tiers;
  /* shape */
  ts_plan_tier tier[3];
  uint32_t spine_groups, spines_per_group, leaf_spine_links;
  uint32_t core_groups, cores_per_group, spine_core_links;
  /* bill of materials */
  uint64_t cables[3];         /* node-leaf, leaf-spine, spine-core */
  uint64_t transceivers[3];   /* same order */
  uint64_t transceivers_total;
  /* performance */
  double bisection_bw;        /* nominal: half the smallest tier cut */
  double bisection_bw_eff;    /* x efficiency: what `topsim topo` reports */
  uint32_t hops_rail;         /* worst switch hops, rail-aligned (PXN) */
  uint32_t hops_any;          /* worst switch hops, any NIC pair; 0: none */
  ts_plan_failure fail[3];    /* one leaf, one spine, one core */
  uint32_t leaves_per_rail;   /* k of the request (1 if unset) */
  uint32_t nic_rails;         /* NICs per node before the k-way split */
  /* racks, media, power, cost (plan_layout.c) */
  ts_plan_layout layout;
  ts_plan_link media[5];      /* node-leaf, leaf-spine, spine-core, storage,
                                 frontend */
  ts_plan_plane planes[2];    /* storage, frontend (switches 0: none) */
  /* human notes: rounding, partial SU cabling, ports left by the split */
  char notes[8][256];
  uint32_t note_count;
  void *priv;                 /* template text for emission; ts_plan_free */
} ts_plan_result;

/* Writes the defaults into *req (template dgx-a100, no size). */
void ts_plan_request_init(ts_plan_request *req);

/* Overlays preset `name` (see ts_plan_preset_names) on
 * *req: template, radix, port speed, nodes per SU, min tiers. Returns 0 or
 * TS_EUSAGE with the known names in d. */
int ts_plan_preset(const char *name, ts_plan_request *req, ts_diag *d);

/* Comma-separated preset and built-in template names, for help texts. */
const char *ts_plan_preset_names(void);
const char *ts_plan_template_names(void);

/* Plans req into *out (zeroed first). Returns 0, or TS_EUSAGE for a bad
 * request (no size, both sizes, unknown template, split impossible on the
 * radix) and for one the rules cannot build within max_tiers (d says why:
 * the message of the last tier tried), TS_ENOINPUT/TS_ESYNTAX/TS_ELIMIT for
 * a template file that cannot be read, TS_ENOMEM. On error *out holds nothing to free; on
 * success free it with ts_plan_free. */
int ts_plan_compute(const ts_plan_request *req, ts_plan_result *out,
                    ts_diag *d);

/* Frees what *r owns (not r itself; NULL and zeroed results are fine). */
void ts_plan_free(ts_plan_result *r);

/* Writes the plan as a topology file (format v1): the template's GPU model,
 * its backend plane with a rail_optimized generator of the plan's tiers,
 * split and radix, the template with its backend NICs only, and one node
 * group of r->nodes. `topsim topo` on it gives the plan's switch counts,
 * leaf oversubscription and bisection_bw_eff. Returns 0 or TS_EIO. */
int ts_plan_emit_yaml(const ts_plan_result *r, FILE *out);

/* Writes the bundled parts catalog (YAML, with sources). Returns 0/TS_EIO. */
int ts_plan_catalog_write(FILE *out);

#endif
