/* topo_preset.h - built-in defaults for network technologies and in-node
 * links. Each preset documents where its numbers come from (see the table in
 * docs/topology-format.md); a topology picks one per plane and may override
 * any field. Lookup is a linear scan over a dozen entries. */
#ifndef TOPSIM_TOPO_PRESET_H
#define TOPSIM_TOPO_PRESET_H

#include "topsim/ts_units.h"

typedef struct topo_net_preset {
  const char *name;
  const char *description;
  double line_rate;        /* bytes/s per port per direction (signalling) */
  double efficiency;       /* achievable fraction of line_rate */
  ts_time_ps hop_latency;  /* per cable + switch traversal */
  ts_time_ps sw_overhead;  /* per-message software/NIC overhead */
  int host_copy;           /* data bounces through host memory (TCP) */
} topo_net_preset;

/* Preset by name, or NULL. */
const topo_net_preset *topo_net_preset_find(const char *name);
/* Comma-separated list of preset names for error messages. */
const char *topo_net_preset_names(void);

/* PCIe: per-direction bytes/s of one lane for generation 1..6, 0 if unknown. */
double topo_pcie_lane_rate(unsigned gen);
/* Achievable fraction of PCIe signalling rate (TLP/DLLP overhead). */
#define TOPO_PCIE_EFFICIENCY 0.85
#define TOPO_PCIE_HOP_LATENCY_PS 150000ULL   /* ~150 ns per PCIe hop */
#define TOPO_NVLINK_HOP_LATENCY_PS 200000ULL /* ~200 ns GPU to NVSwitch */

#endif
