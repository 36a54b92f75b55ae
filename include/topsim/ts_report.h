/* ts_report.h - human and machine readable reports of a topology.
 *
 * Every writer is deterministic (topology order, no pointers, no
 * timestamps) so its output can be diffed against golden files. All return
 * 0, TS_ENOMEM, TS_EUSAGE (bad argument, said per function) or TS_EIO when
 * the stream reports a write error. Nothing returned needs freeing. */
#ifndef TOPSIM_TS_REPORT_H
#define TOPSIM_TS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "topsim/ts_topo.h"
#include "topsim/ts_topo_check.h"

/* Text summary: name; hosts, GPUs by model, racks, SUs; nodes and links by
 * kind; per plane its kind, generator, preset, NICs, switches and ports per
 * tier, oversubscription ("4:1 (4.00)") and bisection in decimal GB/s;
 * scale-up domain size; hop histogram. s from ts_topo_stats_compute(t). */
int ts_report_topo_summary(const ts_topo *t, const ts_topo_stats *s, FILE *out);

/* The same content as one JSON object (jansson, 2-space indent, keys in a
 * fixed order). Bandwidths are bytes/s, in keys ending in "_Bps". */
int ts_report_topo_json(const ts_topo *t, const ts_topo_stats *s, FILE *out);

/* `nvidia-smi topo -m` of one host, in its layout: tab-separated header
 * GPU0..GPUn, NIC0..NICm, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID";
 * one row per GPU then per NIC (classes from ts_topo_gpu_pair_class, self
 * " X "), the legend and the NIC legend. TS_EUSAGE if the host holds no
 * GPU, TS_ENOMEM, TS_EIO on a write error. O(d^2) for d devices. */
int ts_report_topo_matrix(const ts_topo *t, int32_t host, FILE *out);

/* The same matrix as JSON: {"host", "devices": [{"name": "GPU0", "device",
 * "kind", "cpu_affinity", "numa_affinity"}...], "classes": [[...]...]}
 * (self is "X"; unknown affinity is null). Same errors. */
int ts_report_topo_matrix_json(const ts_topo *t, int32_t host, FILE *out);

/* Granularity of a Graphviz drawing. */
typedef enum ts_dot_level {
  TS_DOT_DEVICE, /* every node and link; one cluster per host */
  TS_DOT_NODE,   /* a host's devices become one vertex; switches stay */
  TS_DOT_RACK,   /* one vertex per rack; switches stay */
  TS_DOT_SU,     /* one vertex per SU, its leaves included; spines stay */
  TS_DOT_TIER    /* one box per tier group (ts_report_tiers) */
} ts_dot_level;

/* Writes an undirected Graphviz graph. Above TS_DOT_DEVICE, parallel links
 * between two vertices merge into one edge labelled with the link count and
 * total bandwidth; links inside a vertex vanish. TS_EUSAGE for an unknown
 * level. */
int ts_report_dot(const ts_topo *t, ts_dot_level level, FILE *out);

/* Tier-level diagram of every network plane: one box per tier group (the
 * plane's NICs; leaves per rail; spines per group or per rail; cores per
 * group; at most 16 boxes a row, else merged), edges labelled with cable
 * counts, one row per tier. svg != 0 writes SVG laid out here (no
 * Graphviz), else DOT. O(nodes + links); readable at any size. Returns 0,
 * TS_ENOMEM or TS_EIO. */
int ts_report_tiers(const ts_topo *t, int svg, FILE *out);

#endif
