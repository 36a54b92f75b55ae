/* report_trace.c - Chrome / Perfetto trace of a simulated step
 * (ts_report_step_trace). Trace Event Format: {"traceEvents": [...]} with
 *   "M" process_name / thread_name metadata (pid = host + 1, one per node;
 *       tid = rank * TS_STEP_STREAMS + stream),
 *   "X" complete events {"name","ph","ts","dur","pid","tid"}, ts and dur in
 *       microseconds (fractional),
 *   "C" counters in pid 0 ("links"): one per busiest link, its utilization.
 * Written with fprintf, streaming: O(slices) time, O(ranks) memory. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_coll.h"
#include "topsim/ts_report_step.h"
#include "topsim/ts_route.h"

static const char *const stream_names[TS_STEP_STREAMS] = {
    "compute", "tp", "cp", "ep", "pp", "dp"};

/* Writes s as a JSON string body (quotes and backslashes escaped). */
static void esc(FILE *o, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', o);
    if ((unsigned char)*s >= 0x20) fputc(*s, o);
  }
}

static void sep(FILE *o, bool *first) {
  fputs(*first ? "\n" : ",\n", o);
  *first = false;
}

static void metadata(const ts_step_result *r, const ts_mapping *m,
                     const ts_topo *t, FILE *o, bool *first) {
  uint8_t *seen_rank = calloc(r->ranks + 1, 1);
  uint32_t nh = ts_topo_host_count(t) + 1;
  uint8_t *seen_host = calloc(nh + 1, 1);
  for (uint64_t i = 0; seen_rank && seen_host && i < r->nslices; i++) {
    uint32_t rk = r->slices[i].rank;
    const ts_rank_label *lb = ts_mapping_rank(m, rk);
    uint32_t pid = (uint32_t)(lb->host + 1);
    if (pid < nh && !seen_host[pid]) {
      seen_host[pid] = 1;
      sep(o, first);
      fprintf(o, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                 "\"args\":{\"name\":\"host %d\"}}", pid, lb->host);
    }
    if (seen_rank[rk]) continue;
    seen_rank[rk] = 1;
    for (int s = 0; s < TS_STEP_STREAMS; s++) {
      sep(o, first);
      fprintf(o, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                 "\"args\":{\"name\":\"rank %u ", pid, rk * TS_STEP_STREAMS + s, rk);
      esc(o, ts_topo_node_name(t, lb->gpu));
      fprintf(o, " %s\"}}", stream_names[s]);
    }
  }
  free(seen_rank);
  free(seen_host);
}

static void slice_name(const ts_step_slice *s, char *buf, size_t n) {
  if (s->stream == TS_STEP_STREAM_COMPUTE) {
    static const char *const ph[] = {"fwd", "bwd", "recompute", "optimizer"};
    const char *p = s->kind < 4 ? ph[s->kind] : "?";
    if (s->micro < 0) snprintf(buf, n, "%s", p);
    else snprintf(buf, n, "%s c%u mb%d L%d", p, s->chunk, s->micro, s->layer);
    return;
  }
  const char *op = ts_coll_op_name((ts_coll_op)s->kind);
  if (s->layer >= 0) snprintf(buf, n, "%s L%d", op, s->layer);
  else if (s->micro >= 0) snprintf(buf, n, "%s mb%d", op, s->micro);
  else snprintf(buf, n, "%s", op);
}

static void slices(const ts_step_result *r, const ts_mapping *m, FILE *o,
                   bool *first) {
  for (uint64_t i = 0; i < r->nslices; i++) {
    const ts_step_slice *s = &r->slices[i];
    char name[96];
    slice_name(s, name, sizeof name);
    sep(o, first);
    fprintf(o, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.6f,"
               "\"dur\":%.6f,\"pid\":%d,\"tid\":%u}", name,
            stream_names[s->stream < TS_STEP_STREAMS ? s->stream : 0],
            ts_ps_to_us(s->start), ts_ps_to_us(s->dur),
            ts_mapping_rank(m, s->rank)->host + 1,
            s->rank * TS_STEP_STREAMS + s->stream);
  }
}

static void counters(const ts_step_result *r, const ts_topo *t, FILE *o,
                     bool *first) {
  sep(o, first);
  fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
        "\"args\":{\"name\":\"busiest links\"}}", o);
  for (uint32_t k = 0; k < r->ntop; k++) {
    uint32_t dir = r->top[k].dir;
    for (uint32_t s = 0; s <= r->ncounters; s++) {
      bool end = s == r->ncounters;
      ts_time_ps ts = end ? r->step_time : r->counters[s].t;
      double u = end ? 0 : r->counters[s].util[k];
      sep(o, first);
      fprintf(o, "{\"name\":\"#%u ", k + 1);
      esc(o, ts_topo_node_name(t, ts_route_dir_tail(t, dir)));
      fputs(" -> ", o);
      esc(o, ts_topo_node_name(t, ts_topo_dir_head(t, dir)));
      fprintf(o, "\",\"ph\":\"C\",\"ts\":%.6f,\"pid\":0,\"tid\":0,"
                 "\"args\":{\"utilization\":%.4f}}", ts_ps_to_us(ts), u);
    }
  }
}

int ts_report_step_trace(const ts_step_result *r, const ts_mapping *m,
                         const ts_topo *t, FILE *out) {
  bool first = true;
  fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out);
  metadata(r, m, t, out, &first);
  slices(r, m, out, &first);
  counters(r, t, out, &first);
  fputs("\n]}\n", out);
  return ferror(out) ? TS_EIO : 0;
}
