/* ts_topo_check.h - validation and computed properties of a topology.
 *
 * Validation collects every problem rather than stopping at the first, so
 * `topsim topo --validate` can list them all. Properties are computed in
 * O(V + E) (BFS, union-find, per-switch port sums): no all-pairs work. */
#ifndef TOPSIM_TS_TOPO_CHECK_H
#define TOPSIM_TS_TOPO_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_topo.h"

typedef struct ts_problems {
  ts_diag *items;     /* each carries file:line:column of the culprit */
  uint32_t count, cap;
} ts_problems;

/* Checks: switch ports used <= radix; every plane connected (hosts join the
 * NICs they hold); each rail-labelled NIC links to a leaf of its rail; every
 * GPU reaches every other GPU over the scale-up and backend planes and the
 * links inside nodes. Appends one entry per problem to *out, which must be
 * zeroed or hold earlier problems. Returns the number of problems this call
 * added (0: valid) or TS_ENOMEM (entries appended so far stay in *out).
 * Free with ts_problems_free. */
int ts_topo_validate(const ts_topo *t, ts_problems *out);

/* Warnings for legal but suspicious designs (docs/cli.md lists them): a
 * backend tier oversubscribed beyond 1:1, a tier with more uplink than
 * downlink bandwidth, a switch with uneven uplinks to its upper tier. Same
 * contract as ts_topo_validate: appends to *out, returns how many it added
 * or TS_ENOMEM. Run it on a topology that validates. */
int ts_topo_lint(const ts_topo *t, ts_problems *out);

/* Frees the problem list (not the struct itself). */
void ts_problems_free(ts_problems *p);

/* Ports, bandwidth and oversubscription of one switch tier of one plane. */
typedef struct ts_tier_stats {
  uint32_t switches;
  uint64_t ports_total;   /* sum of radix (0 radix counts as ports used) */
  uint64_t ports_down;    /* toward NICs or the tier below */
  uint64_t ports_up;      /* toward the tier above */
  uint64_t ports_free;
  double down_bw, up_bw;  /* bytes/s, one direction, summed over the tier */
  double oversub;         /* down_bw / up_bw; 0 when the tier has no uplinks */
} ts_tier_stats;

typedef struct ts_plane_stats {
  uint32_t nics, switches, links;
  uint32_t tiers;                       /* highest tier present */
  ts_tier_stats tier[TS_TIER_MAX + 1];  /* index by ts_tier; [0] unused */
  double nic_bw;                        /* sum of NIC port bandwidth */
  double bisection_bw;                  /* bytes/s, see ts_topo_stats */
} ts_plane_stats;

typedef struct ts_topo_stats {
  uint32_t nodes_by_kind[TS_NODE_KIND_COUNT];
  uint32_t links_by_kind[TS_LINK_KIND_COUNT];
  uint32_t gpus, hosts, racks, sus;
  uint32_t plane_count;
  ts_plane_stats *planes;               /* plane_count entries */
  /* Largest set of GPUs joined by NVLink paths (GPU-NVSwitch-GPU or direct),
   * i.e. the scale-up domain size. */
  uint32_t scale_up_domain;
  /* Hop counts (links traversed) from the first GPU to every other GPU over
   * scale-up, backend and in-node links: max and a histogram. */
  uint32_t max_hops;
  uint32_t hop_hist[16];                /* [h] = GPUs at h hops, h < 16 */
  /* Tier-cut bisection: half of the smallest total capacity crossing any
   * tier boundary (NIC->leaf, leaf->spine, spine->core), summed over
   * backend planes. Exact for generated Clos and fat trees; for hand-written
   * irregular graphs it is an upper bound. */
  double bisection_bw;
} ts_topo_stats;

/* Computes stats. Returns 0 or TS_ENOMEM; free with ts_topo_stats_free. */
int ts_topo_stats_compute(const ts_topo *t, ts_topo_stats *out);
/* The same with link l's bandwidth scaled by link_factor[l] (0: failed;
 * NULL: all 1) in every bandwidth figure (tier budgets, oversubscription,
 * bisection); counts, ports and hops are unchanged. */
int ts_topo_stats_scaled(const ts_topo *t, const double *link_factor,
                         ts_topo_stats *out);
void ts_topo_stats_free(ts_topo_stats *s);

/* nvidia-smi topo -m class of the path between two GPUs of one host:
 * "X", "NV#", "PIX", "PXB", "PHB", "NODE" or "SYS". Writes into buf. */
void ts_topo_gpu_pair_class(const ts_topo *t, uint32_t gpu_a, uint32_t gpu_b,
                            char *buf, size_t len);

#endif
