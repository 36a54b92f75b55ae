/* report_step.c - text and JSON reports of one simulated training step
 * (ts_report_step.h). The text is the canonical human summary; the JSON
 * carries everything in the result, per rank arrays included. Cost:
 * O(ranks) for JSON, O(1) for text. */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "topsim/ts_report_step.h"
#include "topsim/ts_route.h"

static double pct(ts_time_ps part, ts_time_ps whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0;
}

static double gib(double bytes) { return bytes / (1024.0 * 1024 * 1024); }

static void link_name(const ts_topo *t, uint32_t dir, char *buf, size_t n) {
  snprintf(buf, n, "%s -> %s", ts_topo_node_name(t, ts_route_dir_tail(t, dir)),
           ts_topo_node_name(t, ts_topo_dir_head(t, dir)));
}

static const ts_setting *setting(const ts_setting *s, size_t n,
                                 const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(s[i].key, key)) return &s[i];
  return NULL;
}

/* One line naming the recipe settings a sweep varies. */
static void text_recipe(const ts_workload *w, FILE *o) {
  ts_setting s[96];
  size_t n = ts_workload_settings(w, s, 96);
  if (n > 96) n = 96;
  static const char *const keys[] = {
      "schedule", "virtual_stages", "recompute", "dp_mode", "zero_stage",
      "micro_batch", "sequence_parallel", "attention", "ep_comm_overlap"};
  fprintf(o, "recipe       "); /* items add their own leading space */
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const ts_setting *x = setting(s, n, keys[i]);
    if (x) fprintf(o, "%s %s=%s", i ? "," : "", keys[i], x->str);
  }
  fputc('\n', o);
}

static void text_header(const ts_step_result *r, const ts_workload *w,
                        const ts_topo *t, FILE *o) {
  fprintf(o, "workload      %s on %s\n", ts_workload_name(w), ts_topo_name(t));
  fprintf(o, "layout        %u GPUs: tp %u, cp %u, pp %u, dp %u, ep %u; "
             "%u micro-batches per step\n", r->ranks,
          ts_workload_parallel(w, TS_GROUP_TP), ts_workload_parallel(w, TS_GROUP_CP),
          ts_workload_parallel(w, TS_GROUP_PP), ts_workload_parallel(w, TS_GROUP_DP),
          ts_workload_parallel(w, TS_GROUP_EP), r->microbatches);
  text_recipe(w, o);
  fprintf(o, "step time     %.6f s\n", ts_ps_to_s(r->step_time));
  if (r->steady_from[0])
    fprintf(o, "              (steady phase extrapolated from runs of %u and "
            "%u micro-batches: --bounded=steady)\n", r->steady_from[0],
            r->steady_from[1]);
  fprintf(o, "tokens/s      %.0f (%.0f tokens per step)\n", r->tokens_per_s,
          r->tokens_per_step);
  fprintf(o, "model FLOP/s  %.1f TFLOP/s per GPU, MFU %.1f%% of %.0f TFLOP/s\n",
          r->flops_per_gpu / 1e12, 100 * r->mfu, r->peak_flops / 1e12);
  if (r->hw_flops_per_gpu > r->flops_per_gpu)
    fprintf(o, "with recompute %.1f TFLOP/s per GPU, HFU %.1f%% (Megatron-LM's "
            "convention)\n", r->hw_flops_per_gpu / 1e12, 100 * r->hfu);
}

static void text_breakdown(const ts_step_result *r, const ts_mapping *m,
                           const ts_topo *t, FILE *o) {
  const ts_rank_label *lb = ts_mapping_rank(m, r->critical_rank);
  const ts_step_breakdown *b = &r->critical;
  fprintf(o, "\ncritical rank %u (%s, pipeline stage %u): where the step "
             "went\n", r->critical_rank, ts_topo_node_name(t, lb->gpu),
          lb->index[TS_GROUP_PP]);
  ts_time_ps T = r->step_time;
  fprintf(o, "  %-16s %12.6f s %6.1f%%\n", "compute", ts_ps_to_s(b->compute),
          pct(b->compute, T));
  for (int d = 0; d < TS_DIM_COUNT; d++) {
    char name[32];
    snprintf(name, sizeof name, "exposed %s", ts_step_dim_name((ts_step_dim)d));
    fprintf(o, "  %-16s %12.6f s %6.1f%%\n", name, ts_ps_to_s(b->exposed[d]),
            pct(b->exposed[d], T));
  }
  fprintf(o, "  %-16s %12.6f s %6.1f%%\n", "pipeline bubble",
          ts_ps_to_s(b->bubble), pct(b->bubble, T));
  fprintf(o, "  %-16s %12.6f s %6.1f%%\n", "idle", ts_ps_to_s(b->idle),
          pct(b->idle, T));
}

static void text_bytes(const ts_step_result *r, FILE *o) {
  fprintf(o, "\nbytes sent per GPU per step (GiB)\n");
  fprintf(o, "  %-4s %12s %12s %12s\n", "dim", "mean", "critical", "cross-node");
  for (int d = 0; d < TS_DIM_COUNT; d++)
    fprintf(o, "  %-4s %12.3f %12.3f %12.3f\n", ts_step_dim_name((ts_step_dim)d),
            gib(r->bytes_mean[d]), gib((double)r->bytes_critical[d]),
            gib(r->cross_node_mean[d]));
}

static void text_links(const ts_step_result *r, const ts_topo *t, FILE *o) {
  fprintf(o, "\nbusiest links (busy time / step time)\n");
  for (uint32_t i = 0; i < r->ntop; i++) {
    char name[600];
    link_name(t, r->top[i].dir, name, sizeof name);
    fprintf(o, "  %5.1f%% %10.3f GiB  %s\n", 100 * r->top[i].utilization,
            gib((double)r->top[i].bytes), name);
  }
  if (!r->ntop) fprintf(o, "  (no traffic)\n");
}

int ts_report_step_text(const ts_step_result *r, const ts_workload *w,
                        const ts_mapping *m, const ts_topo *t, FILE *out) {
  text_header(r, w, t, out);
  text_breakdown(r, m, t, out);
  text_bytes(r, out);
  text_links(r, t, out);
  return ferror(out) ? TS_EIO : 0;
}

/* ---- JSON ------------------------------------------------------------- */

static json_t *breakdown_json(const ts_step_breakdown *b) {
  json_t *o = json_object(), *ex = json_object();
  json_object_set_new(o, "compute_s", json_real(ts_ps_to_s(b->compute)));
  for (int d = 0; d < TS_DIM_COUNT; d++)
    json_object_set_new(ex, ts_step_dim_name((ts_step_dim)d),
                        json_real(ts_ps_to_s(b->exposed[d])));
  json_object_set_new(o, "exposed_s", ex);
  json_object_set_new(o, "bubble_s", json_real(ts_ps_to_s(b->bubble)));
  json_object_set_new(o, "idle_s", json_real(ts_ps_to_s(b->idle)));
  return o;
}

static json_t *dims_json(const double *v) {
  json_t *o = json_object();
  for (int d = 0; d < TS_DIM_COUNT; d++)
    json_object_set_new(o, ts_step_dim_name((ts_step_dim)d), json_real(v[d]));
  return o;
}

static json_t *links_json(const ts_step_result *r, const ts_topo *t) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < r->ntop; i++) {
    char name[600];
    link_name(t, r->top[i].dir, name, sizeof name);
    json_t *l = json_object();
    json_object_set_new(l, "link", json_string(name));
    json_object_set_new(l, "dir", json_integer(r->top[i].dir));
    json_object_set_new(l, "bytes", json_integer((json_int_t)r->top[i].bytes));
    json_object_set_new(l, "busy_s", json_real(ts_ps_to_s(r->top[i].busy)));
    json_object_set_new(l, "utilization", json_real(r->top[i].utilization));
    json_array_append_new(a, l);
  }
  return a;
}

static json_t *ranks_json(const ts_step_result *r) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < r->ranks; i++) {
    json_t *o = json_object(), *b = json_object();
    json_object_set_new(o, "rank", json_integer(i));
    json_object_set_new(o, "finish_s", json_real(ts_ps_to_s(r->rank_finish[i])));
    json_object_set_new(o, "breakdown", breakdown_json(&r->rank_breakdown[i]));
    for (int d = 0; d < TS_DIM_COUNT; d++)
      json_object_set_new(b, ts_step_dim_name((ts_step_dim)d),
                          json_integer((json_int_t)r->rank_bytes[(size_t)i * TS_DIM_COUNT + d]));
    json_object_set_new(o, "bytes_sent", b);
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *counters_json(const ts_step_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "events", json_integer((json_int_t)r->sim.events_processed));
  json_object_set_new(o, "collectives", json_integer((json_int_t)r->collectives));
  json_object_set_new(o, "transfers", json_integer((json_int_t)r->transfers));
  json_object_set_new(o, "wire_bytes", json_integer((json_int_t)r->wire_bytes));
  json_object_set_new(o, "net_bytes_sent", json_integer((json_int_t)r->net.bytes_sent));
  json_object_set_new(o, "net_bytes_delivered",
                      json_integer((json_int_t)r->net.bytes_delivered));
  json_object_set_new(o, "flows", json_integer((json_int_t)r->net.flows_started));
  json_object_set_new(o, "ranks_simulated", json_integer(r->ranks_simulated));
  json_object_set_new(o, "replayed", json_integer((json_int_t)r->replayed));
  json_object_set_new(o, "replayed_beside",
                      json_integer((json_int_t)r->replayed_beside));
  json_object_set_new(o, "replayed_dp", json_integer((json_int_t)r->replayed_dp));
  json_object_set_new(o, "crossed_kept",
                      json_integer((json_int_t)r->crossed_kept));
  json_object_set_new(o, "attempts", json_integer(r->attempts));
  json_object_set_new(o, "isolated_runs", json_integer((json_int_t)r->memo_runs));
  json_object_set_new(o, "isolated_shared", json_integer((json_int_t)r->memo_shared));
  json_object_set_new(o, "fold", json_string(r->fold));
  json_t *st = json_null();
  if (r->steady_from[0])
    st = json_pack("[II]", (json_int_t)r->steady_from[0],
                   (json_int_t)r->steady_from[1]);
  json_object_set_new(o, "steady_from", st);
  return o;
}

/* The effective configuration, by section, as the models used it. */
static json_t *config_json(const ts_workload *w) {
  ts_setting s[96];
  size_t n = ts_workload_settings(w, s, 96);
  if (n > 96) n = 96;
  json_t *o = json_object();
  for (size_t i = 0; i < n; i++) {
    json_t *sec = json_object_get(o, s[i].section);
    if (!sec) json_object_set_new(o, s[i].section, sec = json_object());
    json_t *v = s[i].kind == TS_SET_INT    ? json_integer((json_int_t)s[i].num)
                : s[i].kind == TS_SET_REAL ? json_real(s[i].num)
                : s[i].kind == TS_SET_BOOL ? json_boolean(s[i].num != 0)
                                           : json_string(s[i].str);
    json_object_set_new(sec, s[i].key, v);
  }
  return o;
}

/* The mapping's warnings (TP groups leaving NVLink, stages over HBM under
 * training.memory_check: warn), as run prints them on stderr. */
static json_t *warnings_json(const ts_mapping *m) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < ts_mapping_warning_count(m); i++)
    json_array_append_new(a, json_string(ts_mapping_warning(m, i)));
  return a;
}

static json_t *step_json(const ts_step_result *r, const ts_workload *w,
                         const ts_mapping *m, const ts_topo *t) {
  json_t *o = json_object(), *lay = json_object();
  json_object_set_new(o, "workload", json_string(ts_workload_name(w)));
  json_object_set_new(o, "topology", json_string(ts_topo_name(t)));
  static const char *const dims[] = {"tp", "cp", "ep", "dp", "pp"};
  for (int g = 0; g <= TS_GROUP_PP; g++)
    json_object_set_new(lay, dims[g], json_integer(ts_workload_parallel(w, (ts_group)g)));
  json_object_set_new(o, "layout", lay);
  json_object_set_new(o, "config", config_json(w));
  json_object_set_new(o, "warnings", warnings_json(m));
  json_object_set_new(o, "gpus", json_integer(r->ranks));
  json_object_set_new(o, "microbatches", json_integer(r->microbatches));
  json_object_set_new(o, "step_time_s", json_real(ts_ps_to_s(r->step_time)));
  json_object_set_new(o, "tokens_per_step", json_real(r->tokens_per_step));
  json_object_set_new(o, "tokens_per_s", json_real(r->tokens_per_s));
  json_object_set_new(o, "model_flops_per_step", json_real(r->model_flops));
  json_object_set_new(o, "model_flops_per_s_per_gpu", json_real(r->flops_per_gpu));
  json_object_set_new(o, "peak_flops_per_gpu", json_real(r->peak_flops));
  json_object_set_new(o, "mfu", json_real(r->mfu));
  json_object_set_new(o, "hw_flops_per_s_per_gpu", json_real(r->hw_flops_per_gpu));
  json_object_set_new(o, "hfu", json_real(r->hfu));
  json_object_set_new(o, "critical_rank", json_integer(r->critical_rank));
  json_object_set_new(o, "critical_gpu", json_string(ts_topo_node_name(
                             t, ts_mapping_rank(m, r->critical_rank)->gpu)));
  json_object_set_new(o, "breakdown", breakdown_json(&r->critical));
  json_object_set_new(o, "bytes_sent_mean", dims_json(r->bytes_mean));
  json_object_set_new(o, "cross_node_bytes_mean", dims_json(r->cross_node_mean));
  json_object_set_new(o, "busiest_links", links_json(r, t));
  json_object_set_new(o, "counters", counters_json(r));
  json_object_set_new(o, "ranks", ranks_json(r));
  return o;
}

int ts_report_step_json(const ts_step_result *r, const ts_workload *w,
                        const ts_mapping *m, const ts_topo *t, FILE *out) {
  json_t *root = step_json(r, w, m, t);
  if (!root) return TS_ENOMEM;
  int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                     JSON_REAL_PRECISION(12));
  json_decref(root);
  if (!rc) fputc('\n', out);
  return rc || ferror(out) ? TS_EIO : 0;
}
