/* coll_cost.c - default parameters, which algorithm can run what, the
 * alpha-beta cost model and the auto choice (the way NCCL's tuner picks the
 * (algorithm, protocol) of lowest predicted time per message size).
 *
 * Notation: p ranks, S bytes (nccl-tests size convention, ts_coll.h), alpha
 * the per-step latency of the protocol, B the per-rank bandwidth times the
 * protocol efficiency. Flat algorithms (ring, tree, HD, direct) on a
 * communicator spanning several hosts use the inter-host alpha and bw_inter:
 * the NIC is their bottleneck. Formulas (seconds):
 *   ring   all_reduce       2 (p-1) (alpha + S/(p B))
 *          all_gather, RS   (p-1) (alpha + S/(p B))
 *          broadcast,reduce (p-1) alpha + S/B         (pipelined chain)
 *   tree   all_reduce       2 D alpha + 2 S / (B * tree_eff),  D = ceil(log2 p)
 *          NCCL: tree algbw = busBw / 2 and busBw x 0.92 (tuning.cc, 2.19;
 *          0.9 in older releases): every byte goes up and down.
 *   HD     all_reduce       2 L alpha + 2 (q-1)/q S/B, L = log2 q, plus
 *                           2 (alpha + S/B) when p != q (fold, ts coll_hd.c)
 *          all_gather, RS   L alpha + (p-1)/p S/B (p a power of two)
 *   direct all_to_all, AG, RS  alpha + (p-1)/p S/B; all_reduce twice that;
 *          all_to_allv alpha + max over ranks of max(sent, received) / B;
 *          send_recv alpha + S/B
 *   hier   all_reduce       2 (L-1)(a_i + S/(L B_i)) + 2 (H-1)(a_n + S/(L H B_n))
 *   NVLS   all_reduce       2 alpha + S / B_nvls  (up and down overlap when
 *          pipelined); AG, RS 2 alpha + (p-1)/p S / B_nvls. Simple only
 *          (NCCL runs NVLS with the Simple protocol only).
 * Local reductions are not charged by the model (plans carry reduce_bytes).
 *
 * In a pure alpha-beta model on dedicated links, HD and direct dominate the
 * ring (same bandwidth term, fewer latencies): they lose in practice to link
 * contention the model cannot see. So auto only ranks the algorithms in
 * params.auto_mask (default ring, tree, NVLS, hierarchical: NCCL's set) and
 * takes direct for the ops only direct runs (all_to_all(v), send_recv).
 * Cost: O(algorithms x protocols) per choice; O(p^2) for all_to_allv. */
#include <math.h>

#include "coll/coll.h"

/* Defaults and their sources:
 * - alpha_intra: NCCL tuning.cc hwLat[NVLINK][RING] = LL 0.6 us, LL128 1.9
 *   us, Simple 3.4 us per step; alpha_inter: hwLat[NET][RING] = 2.7, 4.0,
 *   14.0 us (NCCL 2.19; Simple was 9.6 us in 2.8).
 * - efficiency: LL stores 8 bytes of which 4 are a flag (50% of peak); LL128
 *   stores 128-byte lines of which 8 bytes are a flag (120/128 = 93.75%;
 *   "95%" per S. Jeaugey, NVIDIA/nccl#281; NCCL's tuner uses 0.92 for ring
 *   LL128); Simple moves payload only (memory fences instead of flags).
 * - bandwidths: H100 SXM, NVLink4 450 GB/s per direction (bw_intra,
 *   bw_nvls), ConnectX-7 NDR 400 Gb/s = 50 GB/s (bw_inter), HBM3 3.35 TB/s
 *   (domain.md sections 2-3).
 * - tree_efficiency 0.92: NCCL tuning.cc tree busBw factor. */
void ts_coll_params_default(ts_coll_params *p) {
  static const double us = (double)TS_PS_PER_US;
  *p = (ts_coll_params){0};
  p->algo = TS_COLL_AUTO;
  p->proto = TS_COLL_PROTO_AUTO;
  p->channels = 1;
  p->ring_order = TS_COLL_RING_SAME;
  p->root = 0;
  p->peer = 1;
  p->auto_mask = (1u << TS_COLL_RING) | (1u << TS_COLL_TREE) |
                 (1u << TS_COLL_NVLS) | (1u << TS_COLL_HIER);
  const double ai[] = {0.6, 1.9, 3.4}, an[] = {2.7, 4.0, 14.0};
  const double eff[] = {0.5, 120.0 / 128.0, 1.0};
  for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
    p->alpha_intra[q] = (ts_time_ps)(ai[q] * us + 0.5);
    p->alpha_inter[q] = (ts_time_ps)(an[q] * us + 0.5);
    p->efficiency[q] = eff[q];
  }
  p->bw_intra = 450e9;
  p->bw_inter = 50e9;
  p->bw_nvls = 450e9;
  p->hbm_bw = 3.35e12;
  p->tree_efficiency = 0.92;
}

static const char *const op_names[] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast",
    "reduce",     "all_to_all", "all_to_allv",    "send_recv"};
static const char *const algo_names[] = {"auto",   "ring", "tree", "hd",
                                         "direct", "hier", "nvls"};
static const char *const proto_names[] = {"LL", "LL128", "Simple", "auto"};

const char *ts_coll_op_name(ts_coll_op op) {
  return (unsigned)op < TS_COLL_OP_COUNT ? op_names[op] : "?";
}
const char *ts_coll_algo_name(ts_coll_algo a) {
  return (unsigned)a < TS_COLL_ALGO_COUNT ? algo_names[a] : "?";
}
const char *ts_coll_proto_name(ts_coll_proto p) {
  return (unsigned)p <= TS_COLL_PROTO_AUTO ? proto_names[p] : "?";
}

static int hosts_equal(const ts_coll_comm *m) {
  for (int h = 1; h < m->nhosts; h++)
    if (m->host_size[h] != m->host_size[0]) return 0;
  return 1;
}

int coll_supported(const ts_coll_comm *m, ts_coll_op op, ts_coll_algo a,
                   const ts_coll_params *prm, const char **why) {
  int reduce_like = op == TS_COLL_ALL_REDUCE || op == TS_COLL_ALL_GATHER ||
                    op == TS_COLL_REDUCE_SCATTER;
  int ok = 0;
  *why = "the algorithm does not implement this operation";
  switch (a) {
  case TS_COLL_RING:
    ok = reduce_like || op == TS_COLL_BROADCAST || op == TS_COLL_REDUCE;
    break;
  case TS_COLL_TREE: ok = op == TS_COLL_ALL_REDUCE; break;
  case TS_COLL_HD:
    ok = reduce_like;
    if (ok && op != TS_COLL_ALL_REDUCE && !coll_is_pow2(m->n)) {
      ok = 0;
      *why = "halving-doubling all-gather/reduce-scatter need a power of two";
    }
    break;
  case TS_COLL_DIRECT:
    ok = reduce_like || op == TS_COLL_ALL_TO_ALL || op == TS_COLL_ALL_TO_ALLV ||
         op == TS_COLL_SEND_RECV;
    break;
  case TS_COLL_HIER:
    ok = op == TS_COLL_ALL_REDUCE;
    if (ok && !hosts_equal(m)) {
      ok = 0;
      *why = "hierarchical needs the same number of ranks on every host";
    }
    break;
  case TS_COLL_NVLS:
    ok = reduce_like;
    if (ok && m->nhosts > 1) { /* NVLS-tree */
      int every = hosts_equal(m) && m->host_size[0] >= 2;
      for (int h = 0; every && h < m->nhosts; h++) every = m->nvls_ep[h] >= 0;
      if (op != TS_COLL_ALL_REDUCE || !every || !coll_nccl(prm)) {
        ok = 0;
        *why = "NVLS across hosts (NVLS-tree) runs all-reduce under NCCL's "
               "structure, with an NVSwitch and the same number (>= 2) of "
               "ranks on every host";
      }
    } else if (ok && m->nvls_ep[0] < 0) {
      ok = 0;
      *why = "NVLS needs one host with an NVSwitch (ts_coll_comm_set_nvls)";
    } else if (ok && prm->proto != TS_COLL_PROTO_AUTO &&
               prm->proto != TS_COLL_SIMPLE) {
      /* ts_coll_predict refuses it too; say so instead of blaming the op. */
      ok = 0;
      *why = "NVLS runs only the Simple protocol (as in NCCL)";
    }
    break;
  default: break;
  }
  return ok ? 0 : TS_EUSAGE;
}

static double a2av_load(const ts_coll_comm *m, const uint64_t *mx) {
  double worst = 0;
  for (int i = 0; i < m->n; i++) {
    double s = 0, r = 0;
    for (int j = 0; j < m->n; j++)
      if (i != j) s += (double)mx[i * m->n + j], r += (double)mx[j * m->n + i];
    worst = fmax(worst, fmax(s, r));
  }
  return worst;
}

/* Seconds for the flat algorithms (same alpha and B on every step). */
static double flat_cost(const ts_coll_comm *m, ts_coll_op op, double S,
                        const ts_coll_params *prm, ts_coll_algo a, double al,
                        double B) {
  double p = m->n, f = (p - 1) / p;
  int q = 1 << (coll_is_pow2(m->n) ? coll_log2_ceil(m->n)
                                   : coll_log2_ceil(m->n) - 1);
  double L = coll_log2_ceil(q);
  switch (a) {
  case TS_COLL_RING:
    if (op == TS_COLL_ALL_REDUCE) return 2 * (p - 1) * (al + S / (p * B));
    if (op == TS_COLL_BROADCAST || op == TS_COLL_REDUCE)
      return (p - 1) * al + S / B;
    return (p - 1) * (al + S / (p * B));
  case TS_COLL_TREE:
    return 2 * coll_log2_ceil(m->n) * al + 2 * S / (B * prm->tree_efficiency);
  case TS_COLL_HD:
    if (op != TS_COLL_ALL_REDUCE) return L * al + f * S / B;
    return 2 * L * al + 2 * (q - 1.0) / q * S / B +
           (q != m->n ? 2 * (al + S / B) : 0);
  case TS_COLL_DIRECT:
    if (op == TS_COLL_SEND_RECV) return al + S / B;
    if (op == TS_COLL_ALL_TO_ALLV) return al + a2av_load(m, prm->matrix) / B;
    return (op == TS_COLL_ALL_REDUCE ? 2 : 1) * (al + f * S / B);
  default: return -1;
  }
}

double ts_coll_predict(const ts_coll_comm *m, ts_coll_op op, uint64_t bytes,
                       const ts_coll_params *prm, ts_coll_algo a,
                       ts_coll_proto proto) {
  const char *why;
  if (!m || (unsigned)proto >= TS_COLL_PROTO_COUNT ||
      coll_supported(m, op, a, prm, &why))
    return -1;
  if (m->n < 2 && op != TS_COLL_SEND_RECV) return 0;
  double S = (double)bytes, eff = coll_eff(m, prm, op, a, proto, bytes);
  double ai = ts_ps_to_s(coll_alpha_intra(m, prm, a, proto));
  double an = ts_ps_to_s(prm->alpha_inter[proto]);
  double bi = prm->bw_intra * eff, bn = prm->bw_inter * eff;
  double t0 = ts_ps_to_s(coll_startup(prm, a, proto));
  if (a == TS_COLL_DIRECT) t0 += ts_ps_to_s(coll_p2p_fill(m, prm, op, bytes));
  if (a == TS_COLL_NVLS) {
    if (proto != TS_COLL_SIMPLE) return -1;
    if (m->nhosts > 1) { /* NVLS-tree (coll_nvls.c): NVLink and NIC at once */
      double H = m->nhosts, L = m->host_size[0];
      /* eff carries NCCL's NVLS-tree channel cap on the NVLink side; the
       * NIC transfers run at the links' NVLS efficiency (coll_nvls.c). */
      double nv = S * (1 + 1 / L) / (prm->bw_nvls * eff);
      double en = coll_nccl(prm) ? coll_nvls_link_eff(m, prm, bytes) : eff;
      double nic = (m->nhosts == 2 ? 1 : 2 * (H - 1) / H) * S / L / (prm->bw_inter * en);
      return t0 + 2 * coll_log2_ceil(m->nhosts) * ts_ps_to_s(prm->nvls_tree_latency) +
             (nv > nic ? nv : nic);
    }
    double f = op == TS_COLL_ALL_REDUCE ? 1.0 : (m->n - 1.0) / m->n;
    /* NCCL: up and down halves overlap, one NVLS latency (in t0). */
    if (coll_nccl(prm)) /* all-reduce moves S (1 + 1/p) each way */
      return t0 + (op == TS_COLL_ALL_REDUCE ? 1.0 + 1.0 / m->n : f) * S /
                      (prm->bw_nvls * eff);
    return 2 * ai + f * S / (prm->bw_nvls * eff);
  }
  if (a == TS_COLL_HIER) {
    double H = m->nhosts, L = m->host_size[0];
    return t0 + 2 * (L - 1) * (ai + S / (L * bi)) +
           2 * (H - 1) * (an + S / (L * H * bn));
  }
  int multi = m->nhosts > 1;
  if (a == TS_COLL_TREE && coll_nccl(prm)) /* chain + tree, coll_tree.c */
    return coll_ntree_cost(m, prm, proto, bytes);
  /* A multi-host ring's channels cross hosts on as many NICs as there are
   * channels rotated over the local ranks (the simulated ring's order). */
  double bw = multi ? (a == TS_COLL_RING ? coll_ring_bw(m, prm) * eff : bn) : bi;
  /* A ring crosses hosts on H of its p hops per pass; the others are
   * NVLink steps (NCCL: nInterSteps x interLat + the rest x intraLat). */
  double al = !multi ? ai : a == TS_COLL_RING
                              ? ((m->nhosts) * an + (m->n - m->nhosts) * ai) / m->n
                              : an;
  return t0 + flat_cost(m, op, S, prm, a, al, bw);
}

int ts_coll_choose(const ts_coll_comm *m, ts_coll_op op, uint64_t bytes,
                   const ts_coll_params *prm, ts_coll_algo *algo,
                   ts_coll_proto *proto, double *seconds) {
  int only_direct = op == TS_COLL_ALL_TO_ALL || op == TS_COLL_ALL_TO_ALLV ||
                    op == TS_COLL_SEND_RECV;
  double best = -1;
  /* Under NCCL's structure, beyond two hosts NCCL leaves the flat ring for
   * its tree (chain in the node, tree across nodes; coll_tree.c), ranked
   * here as NCCL's tuner ranks it on up to COLL_TREE_AUTO_MAX_HOSTS hosts:
   * on 4 x 8 H100 it meets the published small sizes
   * (tests/validation/h100-4node-all_reduce.csv, 39.8 us at 1 KiB against
   * 35.8), where the hierarchical algorithm ran 30 us. Beyond that the
   * hierarchical algorithm still stands in for it: the tree is lowered
   * transfer by transfer (channels x 2 (n - 1) x chunks), which on 16,384
   * GPUs took 257 s of CPU for a 8 B-32 MiB sweep and overran the
   * descriptor budget at 64 MiB, where the stand-in's compact rings take
   * 4 s (docs/model.md "Known limits"). On two hosts it stays unranked. */
  unsigned mask = prm->auto_mask;
  if (coll_nccl(prm) && m->nhosts > 2)
    mask |= 1u << (m->nhosts <= COLL_TREE_AUTO_MAX_HOSTS ? TS_COLL_TREE : TS_COLL_HIER);
  for (int a = TS_COLL_RING; a < TS_COLL_ALGO_COUNT; a++) {
    if (prm->algo != TS_COLL_AUTO && a != (int)prm->algo) continue;
    if (prm->algo == TS_COLL_AUTO &&
        (only_direct ? a != TS_COLL_DIRECT : !(mask & (1u << a))))
      continue;
    for (int q = 0; q < TS_COLL_PROTO_COUNT; q++) {
      if (prm->proto != TS_COLL_PROTO_AUTO && q != (int)prm->proto) continue;
      double t = ts_coll_predict(m, op, bytes, prm, (ts_coll_algo)a,
                                 (ts_coll_proto)q);
      if (t < 0 || (best >= 0 && t >= best)) continue;
      best = t, *algo = (ts_coll_algo)a, *proto = (ts_coll_proto)q;
    }
  }
  if (best < 0) return TS_EUSAGE;
  *seconds = best;
  return 0;
}
