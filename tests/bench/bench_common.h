/* bench_common.h - what the benchmarks share: a monotonic clock and the
 * generated scale fabric (16,384 DGX-H100-like nodes by default: 8 GPUs, 4
 * NVSwitch, 4 PCIe switches, 2 CPUs, 8 NICs each; 8 rails; a three-tier
 * rail-optimized Clos of 128-port switches split 64/64, 64 nodes per SU).
 * Header-only so each benchmark stays one file. */
#ifndef TOPSIM_BENCH_COMMON_H
#define TOPSIM_BENCH_COMMON_H

#include <stdio.h>
#include <time.h>

#include "topsim/ts_topo.h"

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes the scale fabric's YAML for `nodes` nodes into buf; returns its
 * length (or the length needed, as snprintf). */
static inline int bench_fabric_yaml(unsigned nodes, char *buf, size_t len) {
  return snprintf(buf, len,
      "topsim: 1\n"
      "name: scale-h100-%u\n"
      "gpu_models:\n"
      "  H100-SXM5-80GB: {bf16: 989TFLOP/s, hbm: 80GB, hbm_bandwidth: 3350GB/s}\n"
      "planes:\n"
      "  - name: compute\n"
      "    kind: backend\n"
      "    technology: ib_ndr\n"
      "    routing: dmodk\n"
      "    bandwidth: 200Gb/s\n"
      "    generator:\n"
      "      type: rail_optimized\n"
      "      tiers: 3\n"
      "      leaf: {radix: 128, down: 64, up: 64}\n"
      "      spine: {radix: 128, down: 64, up: 64}\n"
      "      core: {radix: 128}\n"
      "templates:\n"
      "  dgx-h100:\n"
      "    gpu_model: H100-SXM5-80GB\n"
      "    cpus: 2\n"
      "    cpu_link: {type: upi, bandwidth: 83GB/s, latency: 150ns}\n"
      "    pcie_switches: {count: 4, attach: [cpu0, cpu1], gen: 5, width: 16}\n"
      "    gpus: {count: 8, attach: [pcie0, pcie1, pcie2, pcie3], gen: 5}\n"
      "    nvlink: {link_bandwidth: 25GB/s, efficiency: 0.8, switches: 4, "
      "links_per_switch: [5, 4, 4, 5]}\n"
      "    nics:\n"
      "      - {plane: compute, count: 8, attach: [pcie0, pcie1, pcie2, pcie3], "
      "speed: 200Gb/s}\n"
      "nodes:\n"
      "  - {name: dgx, template: dgx-h100, count: %u, per_rack: 4, per_su: 64}\n",
      nodes * 8, nodes);
}

/* Loads the scale fabric; prints the diagnostic and returns NULL on error. */
static inline ts_topo *bench_fabric_load(unsigned nodes) {
  char yaml[4096];
  int len = bench_fabric_yaml(nodes, yaml, sizeof yaml);
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = NULL;
  if (ts_topo_load_buffer(yaml, (size_t)len, "<generated>", &t, &d)) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return NULL;
  }
  return t;
}

#endif
