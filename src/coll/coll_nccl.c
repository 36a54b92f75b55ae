/* coll_nccl.c - NCCL's per-operation cost structure: the constants of its
 * tuning model (src/graph/tuning.cc, NCCL 2.19-2.27) by GPU generation, and
 * the effective protocol efficiency both the cost model and the lowering
 * use, so the chosen (algorithm, protocol) and the simulated time agree.
 *
 * What an operation costs under TS_COLL_COST_NCCL (docs/model.md):
 *   launch + baseLat[algo][proto] + steps x hwLat[proto]
 *          + bytes on the busiest link / (bandwidth x efficiency)
 * where the per-step latencies are the params' alpha_intra / alpha_inter
 * (NCCL's hwLat), and efficiency is the protocol's, capped as NCCL's tuner
 * caps it (coll_eff). NVLS replaces the per-step latencies by one NVLS
 * latency and runs at nvls_efficiency of the NVLink bandwidth. */
#include <math.h>
#include <string.h>

#include "coll/coll.h"

static int has_prefix(const char *s, const char *p) {
  return strncmp(s, p, strlen(p)) == 0;
}

ts_coll_gpu_gen ts_coll_gpu_gen_from_name(const char *m) {
  if (!m) return TS_COLL_GEN_OTHER;
  if (has_prefix(m, "GB") || has_prefix(m, "B200") || has_prefix(m, "B300") ||
      has_prefix(m, "B100"))
    return TS_COLL_GEN_BLACKWELL;
  if (has_prefix(m, "GH") || m[0] == 'H') return TS_COLL_GEN_HOPPER;
  if (has_prefix(m, "A100") || has_prefix(m, "A800") || has_prefix(m, "A30") ||
      has_prefix(m, "A10"))
    return TS_COLL_GEN_AMPERE;
  return TS_COLL_GEN_OTHER;
}

/* Constants and their sources (all NCCL src/graph/tuning.cc unless said):
 * - auto_mask: ring and NVLS (see the comment in the body).
 * - launch 4 us: cudaLaunchKernel plus NCCL's enqueue, paid once per
 *   operation by nccl-tests without CUDA graphs. Not in NCCL's model (which
 *   ranks algorithms, where launch cancels out); measured: an 8-GPU A100
 *   8-byte all_reduce takes 18.75 us (tests/validation/a100-1node-*), NCCL's
 *   ring LL model 6.6 + 14 x 0.6 = 15.0 us.
 * - baseLatencies (us): tree {LL 6.8, LL128 14.0, Simple 8.4}, ring {6.6,
 *   14.0, 8.4}; NVLS 0. Halving-doubling, direct and hierarchical take the
 *   ring's (they are not NCCL algorithms).
 * - NVLS hwLat (NVLink, Simple): 25 us, once per operation.
 * - LL128 efficiency 0.92 (the tuner's "120/128" factor for ring LL128).
 * - llMaxBws (GB/s busBw; 1 node / 2 nodes / more): Ampere 87.7 / 22.5 /
 *   19.0, Hopper 141 / 45 / 35, Blackwell twice Hopper; Volta's 39 / 39 /
 *   20.4 for anything else.
 * - nvlsEfficiency: Hopper 0.85, Blackwell 0.74: the NVLS rate as a
 *   fraction of the NVLink bandwidth (the switch's reduction and multicast
 *   throughput). With the NVLS all-reduce's traffic of S (1 + 1/p) per
 *   direction (coll_nvls.c) this gives 360 GB/s x 0.85 / (9/8) = 272 GB/s
 *   algbw on 8 H100, where the maintainers quote ~275 (nccl-tests#212) and
 *   a user 258 / 265 / 270 / 273 GB/s on 5 / 6 / 7 / 8 GPUs (nccl#1455;
 *   model 255 / 262 / 268 / 272). */
void ts_coll_params_nccl(ts_coll_params *p, ts_coll_gpu_gen gen) {
  static const double us = (double)TS_PS_PER_US;
  static const double llmax[4][3] = {
      {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},
      {282.0, 90.0, 70.0}};
  static const double nvls_eff[4] = {0, 0, 0.85, 0.74};
  const double ring[3] = {6.6, 14.0, 8.4}, tree[3] = {6.8, 14.0, 8.4};
  p->cost_model = TS_COLL_COST_NCCL;
  /* NCCL has no hierarchical algorithm; topsim's tree is a binary tree
   * over all ranks, not NCCL's chain inside a node plus tree across nodes,
   * and runs far from NCCL's tree figures: auto ranks ring and NVLS. */
  p->auto_mask &= ~((1u << TS_COLL_HIER) | (1u << TS_COLL_TREE));
  p->launch = (ts_time_ps)(4.0 * us);
  for (int a = 0; a < TS_COLL_ALGO_COUNT; a++)
    for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
      double v = a == TS_COLL_NVLS ? 0 : a == TS_COLL_TREE ? tree[q] : ring[q];
      p->base_latency[a][q] = (ts_time_ps)(v * us + 0.5);
    }
  p->nvls_latency = (ts_time_ps)(25.0 * us);
  p->efficiency[TS_COLL_LL128] = 0.92;
  unsigned g = (unsigned)gen < 4 ? (unsigned)gen : 0;
  for (int i = 0; i < 3; i++) p->ll_max_bw[i] = llmax[g][i] * 1e9;
  p->nvls_efficiency = nvls_eff[g] > 0 ? nvls_eff[g] : 0.8;
  /* Channels (docs/model.md "Channels"): coll channels 24 on DGX A100
   * (NCCL log, nccl-tests#100), 32 on Hopper and Blackwell; LL128 per
   * channel perChMaxRingLL128Bws; LL per channel fitted once per
   * generation to the one-node curve's 32 KiB-512 KiB plateau (one CTA's
   * LL throughput; NCCL has no constant for it); Simple: the channel's
   * share of the links. NVLS: NVLS_NCHANNELS_SM90 16, SM100 32, and a
   * per-chunk cost fitted once to the DGX H100 curve (5.3). */
  static const uint32_t maxch[4] = {16, 24, 32, 32};
  static const double ll_ch[4] = {6.2, 6.2, 21.0, 42.0};
  static const double ll128_ch[4] = {20.0, 20.0, 36.7, 40.0};
  p->max_channels = maxch[g];
  p->per_ch_bw[TS_COLL_LL] = ll_ch[g] * 1e9;
  p->per_ch_bw[TS_COLL_LL128] = ll128_ch[g] * 1e9;
  p->per_ch_bw[TS_COLL_SIMPLE] = 0;
  p->nvls_channels = g == TS_COLL_GEN_BLACKWELL ? 32 : 16;
  p->nvls_chunk_cost = (ts_time_ps)(0.65 * us);
  /* NVLS-tree across hosts: hwLat[NET][NVLS_TREE][Simple] 20.9 us per
   * tree level up and down (tuning.cc latency 2 log2(nNodes) interLat). */
  p->nvls_tree_latency = (ts_time_ps)(20.9 * us + 0.5);
  /* perChMaxNVLSTreeBws (GB/s busBw per channel; 1 / 2 / more hosts):
   * Hopper 0 / 57.7 / 45.5, Blackwell 0 / 96 / 80; the tuner's NVLS-tree
   * busBw is nChannels x min(NVLink, NIC, this), nChannels the NVLS heads
   * (search.cc: one per NIC:GPU pair, at most the GPUs of a node). */
  static const double nvls_tree_ch[4][3] = {
      {0, 0, 0}, {0, 0, 0}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
  for (int i = 0; i < 3; i++) p->nvls_tree_ch_bw[i] = nvls_tree_ch[g][i] * 1e9;
  /* NCCL's tree (tuning.cc): hwLat[NVLINK][TREE] {0.6, 1.25, 4.0} and
   * hwLat[NET][TREE] {5.0, 8.5, 14.0} us per step (LL / LL128 / Simple);
   * per-channel busBw caps perChMaxTreeBws (Simple) and
   * perChMaxTreeLL128Bws (LL128), GB/s, for 1 / 2 / more hosts. */
  static const double tai[3] = {0.6, 1.25, 4.0}, tan_[3] = {5.0, 8.5, 14.0};
  static const double tree_s[4][3] = {
      {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0},
      {70.0, 42.8, 24.0}};
  static const double tree_ll128[4][3] = {
      {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0},
      {55.6, 31.67, 20.0}};
  for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
    p->tree_alpha_intra[q] = (ts_time_ps)(tai[q] * us + 0.5);
    p->tree_alpha_inter[q] = (ts_time_ps)(tan_[q] * us + 0.5);
  }
  for (int i = 0; i < 3; i++) {
    p->tree_ch_bw[i][TS_COLL_LL] = 0;
    p->tree_ch_bw[i][TS_COLL_LL128] = tree_ll128[g][i] * 1e9;
    p->tree_ch_bw[i][TS_COLL_SIMPLE] = tree_s[g][i] * 1e9;
  }
  /* p2p (paths.cc): a peer over NVLink gets 2 channels per NVLink, at most
   * p2pnChannels = the coll channels rounded up to a power of two, so
   * the power of two above max_channels (A100 2 x 12 -> 32, H100 32); a
   * channel moves NCCL_P2P_PER_CHANNEL_NET_BW = 14 GB/s (NCCL's own
   * per-channel figure, paths.cc). */
  uint32_t pc = 1;
  while (pc < p->max_channels) pc *= 2;
  p->p2p_channels = pc;
  p->p2p_ch_bw = 14e9;
}

/* tuning.cc: "Inter-node rings still have to launch nsteps * net
 * overhead": every step of a ring that crosses hosts passes through the
 * network proxy (a CPU thread posting each step's RDMA write and, for
 * Simple, its GPUDirect flush and the receiver's clear-to-send), so its
 * intra-node steps take at least getNetOverhead: 1 us on Intel CPUs, 2 us
 * on AMD, x 3 for Simple; nInterSteps keep hwLat[NET]. */
void ts_coll_params_net_overhead(ts_coll_params *p, int amd) {
  double o = (amd ? 2.0 : 1.0) * (double)TS_PS_PER_US;
  for (int q = 0; q < TS_COLL_PROTO_COUNT; q++)
    p->net_overhead[q] = (ts_time_ps)(o * (q == TS_COLL_SIMPLE ? 3 : 1) + 0.5);
}

ts_time_ps coll_alpha_intra(const ts_coll_comm *m, const ts_coll_params *p,
                            ts_coll_algo a, ts_coll_proto q) {
  ts_time_ps ai = p->alpha_intra[q];
  if (!coll_nccl(p) || a != TS_COLL_RING || m->nhosts < 2) return ai;
  return p->net_overhead[q] > ai ? p->net_overhead[q] : ai;
}

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint32_t ts_coll_p2p_channels(const ts_coll_params *p, int nranks,
                              int same_host, uint64_t bytes) {
  if (!p || !coll_nccl(p) || p->p2p_channels == 0 || nranks < 2) return 0;
  uint64_t all = p->p2p_channels, per = all;
  if (!same_host) { /* max(1 NIC, NIC bandwidth / 14 GB/s), paths.cc */
    per = p->p2p_ch_bw > 0 ? div_up((uint64_t)p->bw_inter, (uint64_t)p->p2p_ch_bw) : 1;
    uint64_t q = 1;
    while (q < per) q *= 2;
    per = q < all ? q : all;
  }
  /* NCCL 2.18 scheduleP2pTasksToPlan: every peer's sends share the
   * p2pnChannels, at least one per peer and at most four times over. */
  uint64_t lo = per, hi = per, n = (uint64_t)nranks;
  while (lo * n > all && lo > 1) lo /= 2;
  while (hi * n > 4 * all && hi > 1) hi /= 2;
  /* calcP2pChunkSize: P2P_NVL_CHUNKSIZE 512 KiB (P2P_NET_CHUNKSIZE
   * 128 KiB across hosts); parts of at least step/8 and at most 32 steps
   * (one step across hosts); channels double while parts are too big. */
  uint64_t step = same_host ? 512 * 1024 : 128 * 1024;
  uint64_t minsz = step / 8, maxsz = same_host ? 32 * step : step;
  uint64_t nc = lo, sz = div_up(bytes ? bytes : 1, nc);
  if (sz < minsz) sz = minsz;
  while (sz > maxsz && nc <= hi / 2) nc *= 2, sz = div_up(bytes, nc);
  sz = div_up(sz, minsz) * minsz;
  uint64_t used = div_up(bytes ? bytes : 1, sz);
  return (uint32_t)(used < nc ? used : nc);
}

double ts_coll_p2p_cap(const ts_coll_params *p, int nranks, int same_host,
                       uint64_t bytes) {
  /* Across hosts 14 GB/s is NCCL's sizing figure for its channel count,
   * not a measured limit, and the NIC binds in every validated case: no
   * cap (a 1,024-rank shift would otherwise get one 14 GB/s channel). */
  if (!same_host) return 0;
  uint32_t nc = ts_coll_p2p_channels(p, nranks, same_host, bytes);
  return nc ? nc * p->p2p_ch_bw : 0;
}

/* The first step of a p2p send crosses two stages before the receiver
 * has anything: without registered buffers NCCL's Simple protocol takes
 * no direct path (prims_simple.h), so the send warps copy the user buffer
 * into the sender's FIFO one step at a time and post it, and only then do
 * the receive warps read it over NVLink. The pipeline's fill is one step
 * (P2P_NVL_CHUNKSIZE 512 KiB, or the channel's whole part when smaller)
 * at the channel's rate (p2p_ch_bw). Across hosts 0, as for the cap. */
double ts_coll_p2p_fill(const ts_coll_params *p, int nranks, int same_host,
                        uint64_t bytes) {
  if (!same_host || bytes == 0) return 0;
  uint32_t nc = ts_coll_p2p_channels(p, nranks, same_host, bytes);
  if (nc == 0 || !(p->p2p_ch_bw > 0)) return 0;
  uint64_t per = div_up(bytes, nc), step = 512 * 1024;
  return (double)(per < step ? per : step) / p->p2p_ch_bw;
}

ts_time_ps coll_p2p_fill(const ts_coll_comm *m, const ts_coll_params *p,
                         ts_coll_op op, uint64_t bytes) {
  uint64_t part = 0;
  if (!coll_nccl(p) || m->n < 2) return 0;
  if (op == TS_COLL_SEND_RECV) {
    if (p->root < 0 || p->root >= m->n || p->peer < 0 || p->peer >= m->n ||
        m->host[p->root] != m->host[p->peer])
      return 0;
    part = bytes;
  } else if (m->nhosts > 1) {
    return 0; /* NIC peers: no cap, no fill (ts_coll_p2p_cap) */
  } else if (op == TS_COLL_ALL_TO_ALL) { /* one send of S / p per peer */
    part = div_up(bytes, (uint64_t)m->n);
  } else if (op == TS_COLL_ALL_TO_ALLV && p->matrix) {
    for (int i = 0; i < m->n * m->n; i++) /* the largest send fills last */
      if (i / m->n != i % m->n && p->matrix[i] > part) part = p->matrix[i];
  }
  double s = ts_coll_p2p_fill(p, m->n, 1, part);
  return (ts_time_ps)(s * (double)TS_PS_PER_S + 0.5);
}

int coll_nccl(const ts_coll_params *p) {
  return p->cost_model == TS_COLL_COST_NCCL;
}

/* NICs a multi-host ring crosses hosts on: one per channel when the
 * channels are rotated over the local ranks (TS_COLL_RING_ROTATE, one NIC
 * per GPU), else every channel leaves through the same GPU and NIC. */
static double ring_nics(const ts_coll_comm *m, const ts_coll_params *p) {
  if (p->ring_order != TS_COLL_RING_ROTATE) return 1;
  int L = m->host_size[0];
  for (int h = 1; h < m->nhosts; h++)
    if (m->host_size[h] < L) L = m->host_size[h];
  return p->channels < (uint32_t)L ? (double)p->channels : (double)L;
}

double coll_ring_bw(const ts_coll_comm *m, const ts_coll_params *p) {
  if (m->nhosts <= 1) return p->bw_intra;
  double agg = p->bw_inter * ring_nics(m, p);
  return agg < p->bw_intra ? agg : p->bw_intra;
}

uint32_t coll_channels(const ts_coll_comm *m, const ts_coll_params *p,
                       ts_coll_algo a, ts_coll_proto q, uint64_t bytes) {
  /* enqueue.cc: nt threads per channel (LL 512, LL128 640, Simple 512) and
   * a per-thread threshold (LL 8, LL128 8, Simple 64 bytes; ring LL x
   * nRanks, tuning.cc); a channel is dropped while bytes < nc nt thr. */
  static const uint64_t nt[3] = {512, 640, 512}, thr[3] = {8, 8, 64};
  uint64_t nc = p->max_channels, t = nt[q] * thr[q];
  if (a == TS_COLL_RING && q == TS_COLL_LL) t *= (uint64_t)m->n;
  while (nc > 1 && bytes < nc * t) nc--;
  return (uint32_t)nc;
}

/* NVLS chunk by size (enqueue.cc calcCollChunking): nvlsChunkSize 128 KiB,
 * cut to 64 / 32 / 16 KiB below 64 / 8 / 2 x (channels x heads) chunks. */
uint64_t coll_nvls_chunk(const ts_coll_comm *m, const ts_coll_params *p,
                         uint64_t bytes) {
  uint64_t ops = (uint64_t)p->nvls_channels * (uint64_t)m->host_size[0];
  uint64_t c = 128 * 1024;
  if (bytes < 64 * ops * c) c = 65536;
  if (bytes < 8 * ops * c) c = 32768;
  if (bytes < 2 * ops * c) c = 16384;
  return c;
}

/* Every NVLS chunk costs nvls_chunk_cost on its channel besides its bytes
 * at the channel's rate r: throughput c / (c + r o). nvls_efficiency is the
 * rate at the full 128 KiB chunk, so the factor is relative to that. */
static double nvls_chunk_factor(const ts_coll_comm *m, const ts_coll_params *p,
                                double e, uint64_t bytes) {
  if (p->nvls_chunk_cost <= 0 || p->nvls_channels == 0) return 1;
  double r = p->bw_nvls * e / p->nvls_channels;
  double x = r * ts_ps_to_s(p->nvls_chunk_cost), full = 128.0 * 1024;
  double c = (double)coll_nvls_chunk(m, p, bytes);
  return c / (c + x) * (full + x) / full;
}

double coll_nvls_link_eff(const ts_coll_comm *m, const ts_coll_params *p,
                          uint64_t bytes) {
  /* Simple moves payload only (efficiency 1); not p->efficiency, which a
   * lowering's parameters hold already capped (lower_begin). */
  double e = p->nvls_efficiency;
  return e * nvls_chunk_factor(m, p, e, bytes);
}

/* NCCL's NVLS-tree busBw cap (tuning.cc: nChannels x perChMaxNVLSTreeBw,
 * one channel per NVLS head, here the L ranks of a host, each with its
 * NIC): as an algbw, busBw x n / (2 (n-1)) against what the NVLink side
 * moves at efficiency e, S (1 + 1/L) / (bw_nvls e). Returns the factor
 * (<= 1) on e that makes the NVLink side take as long as the cap; 1 on one
 * host, without the cap, or when the links are slower. */
double coll_nvls_tree_cap(const ts_coll_comm *m, const ts_coll_params *p,
                          double e) {
  int H = m->nhosts, i = H <= 1 ? 0 : H == 2 ? 1 : 2;
  if (H <= 1 || !coll_nccl(p) || !(p->nvls_tree_ch_bw[i] > 0) || !(e > 0) ||
      !(p->bw_nvls > 0))
    return 1;
  double n = m->n, L = m->host_size[0];
  double alg = L * p->nvls_tree_ch_bw[i] * n / (2 * (n - 1));
  double nv = p->bw_nvls * e / (1 + 1 / L); /* algbw the NVLink side allows */
  return alg < nv ? alg / nv : 1;
}

uint32_t coll_ntree_channels(const ts_coll_comm *m, const ts_coll_params *p) {
  if (m->nhosts > 1) return (uint32_t)ring_nics(m, p);
  /* one host: NCCL's coll channels (24 on a DGX A100), chains rotated */
  if (p->max_channels > 0) return p->max_channels;
  return p->channels > 0 ? p->channels : 1;
}

/* tuning.cc, tree all-reduce: busBw = graph channels x per-channel graph
 * bandwidth (the NIC's across hosts) x 0.92, at most channels x
 * perChMaxTreeBw; LL: / 3.8, at most llMaxBw; LL128: x 7/9 on one host,
 * 120/128 across hosts, at most channels x perChMaxTreeLL128Bw; algbw =
 * busBw / 2 (every byte goes up and down). */
double coll_ntree_algbw(const ts_coll_comm *m, const ts_coll_params *p,
                        ts_coll_proto q) {
  int H = m->nhosts, i = H <= 1 ? 0 : H == 2 ? 1 : 2;
  double G = coll_ntree_channels(m, p);
  double bus = (H > 1 ? G * p->bw_inter : p->bw_intra) * p->tree_efficiency;
  double cs = p->tree_ch_bw[i][TS_COLL_SIMPLE], c128 = p->tree_ch_bw[i][TS_COLL_LL128];
  if (cs > 0 && G * cs < bus) bus = G * cs;
  if (q == TS_COLL_LL) {
    bus /= 3.8;
    if (p->ll_max_bw[i] > 0 && p->ll_max_bw[i] < bus) bus = p->ll_max_bw[i];
  } else if (q == TS_COLL_LL128) {
    bus *= H == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    if (c128 > 0 && G * c128 < bus) bus = G * c128;
  }
  return bus / 2;
}

/* What the tree lowering moves at full efficiency, per second of S: an
 * interior chain member sends its channel's S/C up and down over NVLink,
 * the head and the tail only one of them, so with the chains rotated over
 * all L local ranks (C a multiple of L) a GPU sends 2 (L-1)/L S, else up
 * to 2 S;
 * across hosts a channel's head NIC carries S / G each way per tree edge
 * it has: channel c runs tree c mod 2 alone on its NIC, so an interior
 * host's head (a parent and two children, which NCCL's binary tree has
 * from 4 hosts up; a chain of 3 hosts has two edges in the middle) sends
 * and receives 3 S / G: G bw_inter / 3 (on two hosts G bw_inter). */
static double tree_ref_bw(const ts_coll_comm *m, const ts_coll_params *p) {
  double L = (double)m->n / m->nhosts, C = coll_ntree_channels(m, p);
  int rot = L > 1 && fmod(C, L) == 0; /* every GPU heads C / L chains */
  double nv = p->bw_intra / (rot ? 2 * (L - 1) / L : 2);
  if (m->nhosts <= 1) return nv;
  double deg = m->nhosts == 2 ? 1 : m->nhosts == 3 ? 2 : 3;
  double nic = coll_ntree_channels(m, p) * p->bw_inter / deg;
  return nic < nv ? nic : nv;
}

/* enqueue.cc: the chunk is one step of the protocol's buffer (buffer /
 * NCCL_STEPS: Simple 4 MiB / 8; LL 512 KiB / 8, half payload; LL128
 * 4,915,200 / 8 x 15/16 = 576,000); tree LL128 halves it while a channel
 * gets fewer than (1 + log2 hosts + 0.1 ppn) x 64 / ppn chunks (down to
 * 128 KiB), then x 16 / ppn (down to 32 KiB). */
uint64_t coll_ntree_chunk(const ts_coll_comm *m, const ts_coll_params *p,
                          ts_coll_proto q, uint64_t bytes) {
  static const uint64_t step[3] = {32768, 576000, 524288};
  uint64_t c = step[q], nc = coll_ntree_channels(m, p);
  if (q != TS_COLL_LL128) return c;
  double ppn = (double)m->n / m->nhosts;
  int l2 = 0;
  while ((1 << (l2 + 1)) <= m->nhosts) l2++;
  double ns = 1 + l2 + 0.1 * ppn;
  while ((double)(bytes / (nc * c)) < ns * 64 / ppn && c > 131072) c /= 2;
  while ((double)(bytes / (nc * c)) < ns * 16 / ppn && c > 32768) c /= 2;
  return c;
}

double coll_eff(const ts_coll_comm *m, const ts_coll_params *p,
                ts_coll_op op, ts_coll_algo a, ts_coll_proto q,
                uint64_t bytes) {
  double e = p->efficiency[q];
  if (!coll_nccl(p)) return e;
  if (op == TS_COLL_SEND_RECV && p->root >= 0 && p->root < m->n &&
      p->peer >= 0 && p->peer < m->n) { /* NCCL's p2p channels */
    int same = m->host[p->root] == m->host[p->peer];
    double bw = same ? p->bw_intra : p->bw_inter;
    double cap = ts_coll_p2p_cap(p, m->n, same, bytes);
    return cap > 0 && bw > 0 && cap / bw < e ? cap / bw : e;
  }
  if (a == TS_COLL_NVLS) {
    e = coll_nvls_link_eff(m, p, bytes);
    return e * coll_nvls_tree_cap(m, p, e);
  }
  if (a == TS_COLL_TREE) { /* NCCL's tree algbw against the lowering's */
    double ref = tree_ref_bw(m, p), bw = coll_ntree_algbw(m, p, q);
    return ref > 0 && bw / ref < e ? bw / ref : e;
  }
  /* The LL cap is on the operation's busBw: all channels together, so
   * against the ring's aggregate bandwidth (every NIC it crosses). */
  double bw = coll_ring_bw(m, p);
  if (q == TS_COLL_LL) {
    int i = m->nhosts <= 1 ? 0 : m->nhosts == 2 ? 1 : 2;
    if (bw > 0 && p->ll_max_bw[i] > 0 && p->ll_max_bw[i] / bw < e)
      e = p->ll_max_bw[i] / bw;
  }
  /* Channels: nc(bytes) channels, each carrying at most max(per_ch_bw,
   * its even share of the links) (tuning.cc busBw = nChannels x bw). */
  if (a == TS_COLL_RING && p->max_channels > 0 && bw > 0) {
    /* Across hosts NCCL's ring graph has one ring per NIC it crosses
     * (search.cc: each ring enters and leaves a node through one NIC, at
     * that NIC's bandwidth), and the tuner caps busBw at graph channels x
     * per-channel rate (tuning.cc); the runtime duplicates the rings but
     * the cap stays the graph's. */
    double maxc = p->max_channels;
    if (m->nhosts > 1 && ring_nics(m, p) < maxc) maxc = ring_nics(m, p);
    double nc = coll_channels(m, p, a, q, bytes);
    if (nc > maxc) nc = maxc;
    double share = bw * p->efficiency[q] / maxc;
    /* A channel gets at least its share of the links, except LL128
     * across hosts: there the tuner's cap, graph channels x
     * perChMaxRingLL128Bw, binds as is (8 NICs x 20 < 0.92 x 192 GB/s on
     * two DGX A100) */
    int strict = m->nhosts > 1 && q == TS_COLL_LL128 && p->per_ch_bw[q] > 0;
    double ch = p->per_ch_bw[q] > share || strict ? p->per_ch_bw[q] : share;
    if (nc * ch / bw < e) e = nc * ch / bw;
  }
  return e;
}

ts_time_ps coll_startup(const ts_coll_params *p, ts_coll_algo a,
                        ts_coll_proto q) {
  if (!coll_nccl(p)) return 0;
  return p->launch + p->base_latency[a][q] +
         (a == TS_COLL_NVLS ? p->nvls_latency : 0);
}

ts_time_ps ts_coll_min_startup(const ts_coll_params *p) {
  ts_time_ps lo = coll_startup(p, TS_COLL_RING, (ts_coll_proto)0);
  for (int a = TS_COLL_RING; a < TS_COLL_ALGO_COUNT; a++)
    for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
      ts_time_ps s = coll_startup(p, (ts_coll_algo)a, (ts_coll_proto)q);
      if (s < lo) lo = s;
    }
  return lo;
}

double coll_ntree_cost(const ts_coll_comm *m, const ts_coll_params *p,
                       ts_coll_proto q, uint64_t bytes) {
  double L = (double)m->n / m->nhosts, S = (double)bytes;
  double hops = 2 * ((L - 1) * ts_ps_to_s(p->tree_alpha_intra[q]) +
                     coll_log2_ceil(m->nhosts) * ts_ps_to_s(p->tree_alpha_inter[q]));
  /* pipeline fill: the first chunk crosses every hop of the critical path
   * (up and down) at its link's rate before the channel streams the rest,
   * S/C - c at algbw / C. With k > 2 chunks per channel the links are not
   * yet loaded while the pipeline fills, so later chunks catch up: the
   * fill's excess over the streaming time shrinks as 2/(k+1) (read off
   * the simulated lowering, tests/test_coll_run.c ntree_matches_cost). */
  double e = coll_eff(m, p, TS_COLL_ALL_REDUCE, TS_COLL_TREE, q, bytes);
  double C = coll_ntree_channels(m, p), c = S / C;
  double chunk = (double)coll_ntree_chunk(m, p, q, bytes);
  if (chunk < c) c = chunk;
  double fill = 0;
  if (e > 0 && p->bw_intra > 0)
    fill += 2 * (L - 1) * c / e / p->bw_intra;
  /* A head with two child hosts receives both children's chunks on one
   * NIC going up and sends both going down: one more chunk time each way
   * per such fork on the critical path (4 hosts: one fork). */
  if (e > 0 && p->bw_inter > 0 && m->nhosts > 1)
    fill += 2 * (coll_log2_ceil(m->nhosts) + coll_btree_forks(m->nhosts)) *
            c / e / p->bw_inter;
  double A = coll_ntree_algbw(m, p, q), k = ceil(S / C / chunk);
  double excess = fill - c * C / A;
  if (k > 1) excess *= 2 / (k + 1);
  return ts_ps_to_s(coll_startup(p, TS_COLL_TREE, q)) + hops + S / A +
         (excess > 0 ? excess : 0);
}
