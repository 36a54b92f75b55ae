/* work_step.c - a training step compiled into per-rank programs
 * (ts_step_prog.h): one program per (pipeline stage, EP index), built from
 * the ops and communication descriptors of the first rank that has it, and
 * the facts a run reports (tokens, FLOPs, peak). Depends on the topology
 * only (GPU model, labels through the mapping); the engine side runs the
 * programs (src/exec). Cost: O(programs x program length). */
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_budget.h"
#include "work/work_step.h"

static int check_layout(const work_cfg *c, const ts_mapping *m, ts_diag *d) {
  if (ts_mapping_group_size(m, TS_GROUP_TP) != c->tp ||
      ts_mapping_group_size(m, TS_GROUP_PP) != c->pp ||
      ts_mapping_group_size(m, TS_GROUP_CP) != c->cp ||
      ts_mapping_group_size(m, TS_GROUP_EP) != c->ep ||
      ts_mapping_ranks(m) != c->tp * c->cp * c->pp * c->dp)
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "the mapping was made for "
                       "another parallel layout than the workload's");
  if (c->pp > 65535)
    return ts_diag_set(d, TS_EINVALID, NULL, 0, 0, "pp %u > 65535", c->pp);
  return 0;
}

static const ts_gpu_model *gpu_model(const ts_topo *t, const ts_mapping *m) {
  if (!ts_mapping_ranks(m)) return NULL;
  return ts_topo_gpu_model(t, ts_topo_node(t, ts_mapping_rank(m, 0)->gpu)->model);
}

const ts_step_prog *ts_step_progs_rank(const ts_step_progs *p,
                                       const ts_mapping *m, uint32_t r) {
  const ts_rank_label *lb = ts_mapping_rank(m, r);
  return &p->prog[lb->index[TS_GROUP_PP] * p->ep + lb->index[TS_GROUP_EP]];
}

/* One program per (stage, EP index), from the first rank that has it. */
static int build_progs(ts_step_progs *P, const ts_workload *w,
                       const work_cfg *c, const ts_topo *t,
                       const ts_mapping *m) {
  P->nprogs = c->pp * c->ep;
  P->prog = calloc(P->nprogs, sizeof *P->prog);
  if (!P->prog) return TS_ENOMEM;
  const ts_gpu_model *gpu = gpu_model(t, m);
  for (uint32_t r = 0; r < P->ranks; r++) {
    const ts_rank_label *lb = ts_mapping_rank(m, r);
    uint32_t stage = lb->index[TS_GROUP_PP], e = lb->index[TS_GROUP_EP];
    step_prog *p = &P->prog[stage * c->ep + e];
    if (p->ins) continue;
    ts_op *ops = NULL;
    ts_comm_desc *descs = NULL;
    size_t nops = 0, ndescs = 0;
    int rc = ts_work_ops(w, gpu, stage, e, &ops, &nops);
    if (!rc) rc = ts_work_comm(w, m, r, &descs, &ndescs);
    if (!rc) rc = step_prog_build(c, stage, ops, nops, descs, ndescs, p);
    free(ops);
    free(descs);
    if (rc) return rc;
  }
  return 0;
}

static void facts(ts_step_progs *P, const ts_workload *w, const work_cfg *c,
                  const ts_topo *t, const ts_mapping *m) {
  P->pp = c->pp;
  P->ep = c->ep;
  P->chunks = work_chunks(c);
  P->microbatches = work_microbatches(c);
  P->tokens_per_step = (double)c->global_batch * c->seq_len;
  P->model_flops = ts_work_step_model_flops(w);
  P->hw_flops = ts_work_step_flops(w);
  const ts_gpu_model *g = gpu_model(t, m);
  P->peak_flops = g ? g->bf16_flops : 0;
  if (g && c->dtype == WORK_FP8 && g->fp8_flops > 0) P->peak_flops = g->fp8_flops;
}

int ts_step_compile(const ts_workload *w, const ts_topo *t,
                    const ts_mapping *m, ts_step_progs *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  work_cfg c;
  work_derive(w, &c);
  int rc = check_layout(&c, m, d);
  if (rc) return rc;
  out->ranks = ts_mapping_ranks(m);
  facts(out, w, &c, t, m);
  out->ep_share = calloc((size_t)c.ep + 1, sizeof *out->ep_share);
  if (!out->ep_share) rc = TS_ENOMEM;
  for (uint32_t i = 0; !rc && c.experts && i < c.ep; i++)
    out->ep_share[i] = work_moe_rank_share(&c, i);
  if (!rc) rc = build_progs(out, w, &c, t, m);
  if (rc == TS_ENOMEM) ts_diag_set(d, rc, NULL, 0, 0, "out of memory");
  if (rc == TS_ELIMIT)
    ts_budget_refuse(d, TS_BUDGET_DESCRIPTORS, w->file, 0, 0,
                     "the step program of one rank (its compute ops, "
                     "collectives and sends) is too long");
  if (rc) ts_step_progs_free(out);
  return rc;
}

int ts_step_compile_mb(const ts_workload *w, const ts_topo *t,
                       const ts_mapping *m, uint32_t microbatches,
                       ts_step_progs *out, ts_diag *d) {
  uint64_t gb = (uint64_t)microbatches * w->cfg.micro_batch * w->cfg.dp;
  if (!microbatches || gb > UINT32_MAX) return ts_step_compile(w, t, m, out, d);
  /* a shallow copy: its strings stay w's, read only */
  struct ts_workload w2 = *w;
  w2.cfg.global_batch = (uint32_t)gb;
  return ts_step_compile(&w2, t, m, out, d);
}

void ts_step_progs_free(ts_step_progs *p) {
  if (!p) return;
  for (uint32_t i = 0; p->prog && i < p->nprogs; i++) step_prog_free(&p->prog[i]);
  free(p->prog);
  free(p->ep_share);
  memset(p, 0, sizeof *p);
}
