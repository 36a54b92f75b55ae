/* topo_preset.c - network technology presets (sources in
 * docs/topology-format.md, "Link presets"). Line rates are the signalling
 * rates vendors publish; efficiency is the fraction that RDMA bandwidth
 * tests reach; latencies are per switch hop (port to port plus a few metres
 * of cable); sw_overhead is the per-message cost of the software stack. */
#include <string.h>

#include "topo/topo_preset.h"

#define GBIT (1e9 / 8)
#define NS 1000ULL

static const topo_net_preset presets[] = {
    {"ib_hdr", "InfiniBand HDR (ConnectX-6, Quantum QM8700)", 200 * GBIT, 0.96,
     150 * NS, 1500 * NS, 0},
    {"ib_ndr", "InfiniBand NDR (ConnectX-7, Quantum-2 QM9700)", 400 * GBIT,
     0.96, 150 * NS, 1500 * NS, 0},
    {"ib_xdr", "InfiniBand XDR (ConnectX-8, Quantum-X800)", 800 * GBIT, 0.95,
     150 * NS, 1500 * NS, 0},
    {"roce_v2", "RoCEv2 over lossless Ethernet (400G)", 400 * GBIT, 0.92,
     600 * NS, 2000 * NS, 0},
    {"efa", "AWS Elastic Fabric Adapter (SRD, 100G ports)", 100 * GBIT, 0.90,
     1000 * NS, 12000 * NS, 0},
    {"slingshot", "HPE Slingshot-11 (Cassini NIC, Rosetta switch)", 200 * GBIT,
     0.90, 350 * NS, 2000 * NS, 0},
    {"gcp_tcpx", "Google GPUDirect-TCPX (A3, gVNIC 200G)", 200 * GBIT, 0.75,
     1000 * NS, 20000 * NS, 0},
    {"gcp_tcpxo", "Google GPUDirect-TCPXO (A3 Mega, 200G)", 200 * GBIT, 0.85,
     1000 * NS, 10000 * NS, 0},
    {"gcp_gib", "Google gIB RDMA (A3 Ultra/A4, RoCE 400G)", 400 * GBIT, 0.92,
     600 * NS, 2000 * NS, 0},
    {"tcp_ethernet", "Plain TCP over Ethernet through the host stack (100G)",
     100 * GBIT, 0.60, 1000 * NS, 30000 * NS, 1},
    {"ethernet_1g", "1 GbE management (BMC/IPMI)", 1 * GBIT, 0.90, 5000 * NS,
     50000 * NS, 1},
};

const topo_net_preset *topo_net_preset_find(const char *name) {
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (strcmp(presets[i].name, name) == 0) return &presets[i];
  return NULL;
}

const char *topo_net_preset_names(void) {
  return "ib_hdr, ib_ndr, ib_xdr, roce_v2, efa, slingshot, gcp_tcpx, "
         "gcp_tcpxo, gcp_gib, tcp_ethernet, ethernet_1g";
}

double topo_pcie_lane_rate(unsigned gen) {
  /* GT/s x encoding / 8 bits: gen1-2 8b/10b, gen3-5 128b/130b, gen6 FLIT
   * (242/256 of 64 GT/s). */
  static const double rate[] = {0,       0.25e9,  0.5e9,  0.9846e9,
                                1.969e9, 3.938e9, 7.563e9};
  return gen >= 1 && gen <= 6 ? rate[gen] : 0;
}
