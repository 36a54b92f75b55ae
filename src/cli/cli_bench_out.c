/* cli_bench_out.c - `topsim bench` in nccl-tests' own layout, so a scraper
 * written for nccl-tests (keying on "out-of-place", reading busbw as the
 * sixth field from the end, the "# Avg bus bandwidth" footer) reads topsim
 * unchanged.
 *
 * Layout learned from nccl-tests 2.19.6 (src/util.cu writeDeviceReport,
 * writeResultHeader, writeBenchmarkLine*, writeResultFooter):
 *
 *   # Collective test starting: all_reduce_perf
 *   # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) ...
 *   # topsim: ...                         (topsim's own fields, comments)
 *   #
 *   # Using devices
 *   #  Rank  0 Group  0 Pid      0 on       dgx0 device  0 [0000:00:00] A100
 *   #
 *   #   header (two lines of column names and units)
 *   size count type redop root | time algbw busbw #wrong | (in-place) same
 *   # Out of bounds values : 0 OK
 *   # Avg bus bandwidth    : 12.3456
 *   # topsim algorithm: ...
 *   #
 *   # Collective test concluded: all_reduce_perf
 *   #
 *
 * Field widths: size and count %12, type %8, redop and root %6, time 7
 * columns, algbw and busbw 6 (ts_coll_nccltests_num: 2 decimals when they
 * fit, fewer when not). #wrong is "N/A": topsim moves no data to check.
 * Cost: O(rows + ranks) lines. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "cli/cli_bench.h"

static const char *host_of(const bench_report *r, uint32_t rank, char *buf, size_t len) {
  const char *name = ts_topo_node_name(r->t, r->gpus[rank]);
  const char *slash = strchr(name, '/');
  snprintf(buf, len, "%.*s", slash ? (int)(slash - name) : (int)strlen(name), name);
  return buf;
}

static void print_preamble(const bench_report *r, FILE *out) {
  fprintf(out, "# Collective test starting: %s\n", r->program);
  fprintf(out, "# nThread 1 nGpus %u minBytes %llu maxBytes %llu step: %llu(%s) "
          "warmup iters: %d iters: %d agg iters: 1 validation: 0 graph: 0 "
          "unalign: 0\n", r->ngpus, (unsigned long long)r->min_bytes,
          (unsigned long long)r->max_bytes, (unsigned long long)r->step,
          r->step_is_factor ? "factor" : "bytes", r->warmup, r->iters);
  for (int i = 0; i < 4 && r->info[i]; i++) fprintf(out, "# topsim: %s\n", r->info[i]);
  fprintf(out, "#\n# Using devices\n");
  for (uint32_t k = 0; k < r->ngpus; k++) {
    const ts_node *g = ts_topo_node(r->t, r->gpus[k]);
    char host[128];
    /* No PCI bus id is modelled: [0000:00:00] keeps the field's shape. */
    fprintf(out, "#  Rank %2u Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n",
            k, 0, 0, host_of(r, k, host, sizeof host), g->local, 0, 0, 0,
            ts_topo_gpu_model(r->t, g->model)->name);
  }
}

static void print_header(FILE *out) {
  fprintf(out, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                "
          "       in-place          \n", "", "", "", "", "");
  fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
          "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
          "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
  fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
          "(GB/s)", "(GB/s)", "", 0, "");
}

static void print_group(const bench_row *w, FILE *out) {
  char tm[16], alg[16], bus[16];
  ts_coll_nccltests_num(w->time_us, 7, tm, sizeof tm);
  ts_coll_nccltests_num(w->algbw, 6, alg, sizeof alg);
  ts_coll_nccltests_num(w->busbw, 6, bus, sizeof bus);
  fprintf(out, "  %7s  %6s  %6s    N/A", tm, alg, bus);
}

static void print_row(const bench_report *r, const bench_row *w, FILE *out) {
  char root[16];
  snprintf(root, sizeof root, "%6i", r->root);
  fprintf(out, "%12lld  %12lld  %8s  %6s  %6s", (long long)w->size, (long long)w->count,
          r->type_name, r->redop, root);
  print_group(w, out); /* out-of-place */
  print_group(w, out); /* in-place: the same simulated run */
  fputc('\n', out);
}

/* nccl-tests averages busbw over every out-of-place and in-place row. */
static double avg_busbw(const bench_report *r) {
  double sum = 0;
  for (uint32_t i = 0; i < r->nrows; i++) sum += 2 * r->rows[i].busbw;
  return r->nrows ? sum / (2.0 * r->nrows) : 0;
}

/* "# topsim algorithm: 8-65536 ring/LL, 131072-134217728 ring/Simple":
 * runs of sizes that chose the same algorithm and protocol. */
static void print_algorithms(const bench_report *r, FILE *out) {
  if (!r->coll || !r->nrows) return;
  fprintf(out, "# topsim algorithm:");
  for (uint32_t i = 0, j; i < r->nrows; i = j) {
    for (j = i + 1; j < r->nrows && r->rows[j].algo == r->rows[i].algo &&
                    r->rows[j].proto == r->rows[i].proto; j++) {
    }
    fprintf(out, "%s %llu-%llu %s/%s", i ? "," : "", (unsigned long long)r->rows[i].size,
            (unsigned long long)r->rows[j - 1].size, ts_coll_algo_name(r->rows[i].algo),
            ts_coll_proto_name(r->rows[i].proto));
  }
  fputc('\n', out);
}

int cli_bench_print_nccltests(const bench_report *r, FILE *out) {
  print_preamble(r, out);
  print_header(out);
  for (uint32_t i = 0; i < r->nrows; i++) print_row(r, &r->rows[i], out);
  fprintf(out, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  fprintf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", avg_busbw(r), "");
  print_algorithms(r, out);
  fprintf(out, "#\n# Collective test concluded: %s\n#\n\n", r->program);
  return ferror(out) ? TS_EIO : 0;
}

/* ---- -J FILE: nccl-tests' JSON ---- */

/* nccl-tests stamps local time; SOURCE_DATE_EPOCH (the reproducible-builds
 * convention) pins it so reruns are byte-identical. */
static void stamp(char *buf, size_t len) {
  const char *env = getenv("SOURCE_DATE_EPOCH");
  time_t now = env ? (time_t)strtoll(env, NULL, 10) : time(NULL);
  struct tm tmv;
  if (env) gmtime_r(&now, &tmv);
  else localtime_r(&now, &tmv);
  strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tmv);
}

static json_t *json_devices(const bench_report *r) {
  json_t *a = json_array();
  for (uint32_t k = 0; a && k < r->ngpus; k++) {
    const ts_node *g = ts_topo_node(r->t, r->gpus[k]);
    char host[128];
    json_array_append_new(a, json_pack("{s:i,s:i,s:i,s:s,s:i,s:s,s:s}", "rank", (int)k,
                                       "group", 0, "pid", 0, "hostname",
                                       host_of(r, k, host, sizeof host), "device",
                                       (int)g->local, "device_hex", "0000:00:00",
                                       "device_info", ts_topo_gpu_model(r->t, g->model)->name));
  }
  return a;
}

/* nccl-tests writes its booleans as the strings "true" / "false". */
static json_t *json_config(const bench_report *r) {
  json_t *c = json_pack("{s:i,s:i,s:I,s:I}", "nthreads", 1, "ngpus", (int)r->ngpus,
                        "minimum_bytes", (json_int_t)r->min_bytes, "maximum_bytes",
                        (json_int_t)r->max_bytes);
  if (!c) return NULL;
  json_object_set_new(c, r->step_is_factor ? "step_factor" : "step_bytes",
                      json_integer((json_int_t)r->step));
  json_t *rest = json_pack("{s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:i,s:s,s:o}", "warmup_iters",
                           r->warmup, "iterations", r->iters, "aggregated_iterations", 1,
                           "validation", 0, "graph", 0, "blocking_collectives", "false",
                           "per_iter_timing", "false", "per_iter_skip", 0,
                           "parallel_init", "false", "devices", json_devices(r));
  json_object_update(c, rest);
  json_decref(rest);
  return c;
}

static json_t *json_result(const bench_report *r, const bench_row *w) {
  char root[16];
  snprintf(root, sizeof root, "%6i", r->root);
  json_t *res = json_pack("{s:I,s:I,s:s,s:s,s:s}", "size", (json_int_t)w->size, "count",
                          (json_int_t)w->count, "type", r->type_name, "redop", r->redop,
                          "root", root);
  for (int k = 0; res && k < 2; k++)
    json_object_set_new(res, k ? "in_place" : "out_of_place",
                        json_pack("{s:f,s:f,s:f,s:n}", "time", w->time_us, "alg_bw",
                                  w->algbw, "bus_bw", w->busbw, "nwrong"));
  json_t *tail = json_pack("{s:i,s:s}", "actual_iterations", r->iters, "experiment_name", "");
  if (r->coll && tail)
    json_object_set_new(tail, "topsim_algorithm",
                        json_sprintf("%s/%s", ts_coll_algo_name(w->algo),
                                     ts_coll_proto_name(w->proto)));
  json_object_update(res, tail);
  json_decref(tail);
  return res;
}

static json_t *json_doc(const bench_report *r) {
  char start[64];
  stamp(start, sizeof start);
  json_t *args = json_array(), *results = json_array();
  json_array_append_new(args, json_string("topsim")); /* nccl-tests: argv[0] */
  for (int i = 0; i < r->argc; i++) json_array_append_new(args, json_string(r->argv[i]));
  for (uint32_t i = 0; i < r->nrows; i++)
    json_array_append_new(results, json_result(r, &r->rows[i]));
  /* "env" stays empty: the environment is not an input of a simulation and
   * would make the file differ between machines. */
  return json_pack("{s:i,s:s,s:o,s:[],s:i,s:o,s:o,s:{s:i,s:s},s:{s:f,s:s},s:[],s:s}",
                   "version", 3, "start_time", start, "args", args, "env",
                   "nccl_version", 0, "config", json_config(r), "results", results,
                   "out_of_bounds", "count", 0, "okay", "true",
                   "average_bus_bandwidth", "bandwidth", avg_busbw(r), "okay",
                   "unchecked", "errors", "end_time", start);
}

int cli_bench_write_json(const bench_report *r, const char *path) {
  json_t *j = json_doc(r);
  if (!j) {
    fprintf(stderr, "topsim bench: out of memory building the JSON\n");
    return EX_OSERR;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    int e = errno;
    json_decref(j);
    fprintf(stderr, "topsim bench: cannot write '%s': %s\n", path, strerror(e));
    return EX_CANTCREAT;
  }
  int rc = json_dumpf(j, f, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(j);
  if (fputc('\n', f) == EOF) rc = -1;
  if (fclose(f)) rc = -1;
  if (rc) fprintf(stderr, "topsim bench: error writing '%s'\n", path);
  return rc ? EX_IOERR : 0;
}
