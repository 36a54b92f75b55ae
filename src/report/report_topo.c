/* report_topo.c - topology summary (text and JSON) and the per-host GPU
 * path matrix.
 *
 * Uses the public topology API only. Output order is topology order (node
 * kinds, link kinds, planes and tiers by index), numbers are printed with
 * fixed formats, so the text is stable for golden tests. Bandwidths print
 * as decimal GB/s (1e9 bytes/s). Costs: summary and JSON O(V + P) after the
 * stats; matrix O(g^2) pair classes for a host of g GPUs. */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_json.h"
#include "topsim/ts_report.h"

#define GBPS 1e9

static int stream_status(FILE *out) { return ferror(out) ? TS_EIO : 0; }

/* "4:1", "1.5:1", or "1:2" when more goes up than down. */
static void ratio_text(double r, char *buf, size_t len) {
  if (r >= 1) snprintf(buf, len, "%.3g:1", r);
  else snprintf(buf, len, "1:%.3g", r > 0 ? 1 / r : 0);
}

static uint32_t gpus_of_model(const ts_topo *t, uint32_t model) {
  const uint32_t *ids;
  uint32_t n = ts_topo_gpus(t, &ids), c = 0;
  for (uint32_t i = 0; i < n; i++) c += ts_topo_node(t, ids[i])->model == model;
  return c;
}

static void text_counts(const ts_topo *t, const ts_topo_stats *s, FILE *out) {
  const char *name = ts_topo_name(t);
  fprintf(out, "topology: %s\n", name && *name ? name : "(unnamed)");
  fprintf(out, "hosts: %u\nGPUs: %u", s->hosts, s->gpus);
  const char *sep = " (";
  for (uint32_t m = 0; m < ts_topo_gpu_model_count(t); m++) {
    uint32_t c = gpus_of_model(t, m);
    if (!c) continue;
    fprintf(out, "%s%s x%u", sep, ts_topo_gpu_model(t, m)->name, c);
    sep = ", ";
  }
  fprintf(out, "%s\nracks: %u\nSUs: %u\nnodes:", *sep == ',' ? ")" : "",
          s->racks, s->sus);
  for (int k = 0; k < TS_NODE_KIND_COUNT; k++)
    fprintf(out, "%s %s %u", k ? "," : "", ts_node_kind_name(k),
            s->nodes_by_kind[k]);
  fprintf(out, "\nlinks:");
  for (int k = 0; k < TS_LINK_KIND_COUNT; k++)
    fprintf(out, "%s %s %u", k ? "," : "", ts_link_kind_name(k),
            s->links_by_kind[k]);
  fputc('\n', out);
}

static void text_tier(const ts_tier_stats *ts, int k, bool top, FILE *out) {
  fprintf(out,
          "  %s: %u switches, ports %llu used %llu free %llu (down %llu, up "
          "%llu)", ts_tier_name(k), ts->switches,
          (unsigned long long)ts->ports_total,
          (unsigned long long)(ts->ports_down + ts->ports_up),
          (unsigned long long)ts->ports_free,
          (unsigned long long)ts->ports_down, (unsigned long long)ts->ports_up);
  char r[32];
  ratio_text(ts->oversub, r, sizeof r);
  if (ts->up_bw > 0) fprintf(out, ", oversubscription %s (%.2f)\n", r, ts->oversub);
  else fprintf(out, top ? ", top tier\n" : ", no uplinks\n");
}

static void text_plane(const ts_topo *t, const ts_topo_stats *s, uint32_t p,
                       FILE *out) {
  const ts_plane *pl = ts_topo_plane(t, p);
  const ts_plane_stats *ps = &s->planes[p];
  fprintf(out, "plane '%s': %s, generator %s, preset %s\n", pl->name,
          ts_plane_kind_name(pl->kind), pl->generator ? pl->generator : "",
          pl->link_preset && *pl->link_preset ? pl->link_preset : "-");
  fprintf(out, "  NICs %u (%.1f GB/s), switches %u, links %u\n", ps->nics,
          ps->nic_bw / GBPS, ps->switches, ps->links);
  for (uint32_t k = 1; k <= ps->tiers && k <= TS_TIER_MAX; k++)
    if (ps->tier[k].switches) text_tier(&ps->tier[k], (int)k, k == ps->tiers, out);
  if (ps->tiers) fprintf(out, "  bisection: %.1f GB/s\n", ps->bisection_bw / GBPS);
}

int ts_report_topo_summary(const ts_topo *t, const ts_topo_stats *s,
                           FILE *out) {
  text_counts(t, s, out);
  for (uint32_t p = 0; p < s->plane_count; p++) text_plane(t, s, p, out);
  fprintf(out, "bisection (backend planes): %.1f GB/s\n", s->bisection_bw / GBPS);
  fprintf(out, "scale-up domain: %u GPUs\n", s->scale_up_domain);
  fprintf(out, "hops from first GPU: max %u;", s->max_hops);
  for (int h = 0; h < 16; h++)
    if (s->hop_hist[h]) fprintf(out, " %d%s:%u", h, h == 15 ? "+" : "", s->hop_hist[h]);
  fputc('\n', out);
  return stream_status(out);
}

/* ---- JSON ---- */

static json_t *json_counts(const uint32_t *v, int n, bool nodes, int *bad) {
  json_t *o = json_object();
  for (int k = 0; k < n; k++)
    report_jset(o, nodes ? ts_node_kind_name(k) : ts_link_kind_name(k),
         json_integer(v[k]), bad);
  return o;
}

static json_t *json_models(const ts_topo *t, int *bad) {
  json_t *a = json_array();
  for (uint32_t m = 0; m < ts_topo_gpu_model_count(t); m++) {
    json_t *o = json_object();
    report_jset(o, "name", json_string(ts_topo_gpu_model(t, m)->name), bad);
    report_jset(o, "count", json_integer(gpus_of_model(t, m)), bad);
    report_japp(a, o, bad);
  }
  return a;
}

static json_t *json_tier(const ts_tier_stats *ts, int k, int *bad) {
  json_t *o = json_object();
  report_jset(o, "tier", json_string(ts_tier_name(k)), bad);
  report_jset(o, "switches", json_integer(ts->switches), bad);
  report_jset(o, "ports_total", json_integer((json_int_t)ts->ports_total), bad);
  report_jset(o, "ports_down", json_integer((json_int_t)ts->ports_down), bad);
  report_jset(o, "ports_up", json_integer((json_int_t)ts->ports_up), bad);
  report_jset(o, "ports_free", json_integer((json_int_t)ts->ports_free), bad);
  report_jset(o, "down_bw_Bps", json_real(ts->down_bw), bad);
  report_jset(o, "up_bw_Bps", json_real(ts->up_bw), bad);
  report_jset(o, "oversub", json_real(ts->oversub), bad);
  return o;
}

static json_t *json_plane(const ts_topo *t, const ts_topo_stats *s,
                          uint32_t p, int *bad) {
  const ts_plane *pl = ts_topo_plane(t, p);
  const ts_plane_stats *ps = &s->planes[p];
  json_t *o = json_object(), *tiers = json_array();
  report_jset(o, "name", json_string(pl->name), bad);
  report_jset(o, "kind", json_string(ts_plane_kind_name(pl->kind)), bad);
  report_jset(o, "generator", json_string(pl->generator ? pl->generator : ""), bad);
  report_jset(o, "link_preset", json_string(pl->link_preset ? pl->link_preset : ""), bad);
  report_jset(o, "nics", json_integer(ps->nics), bad);
  report_jset(o, "switches", json_integer(ps->switches), bad);
  report_jset(o, "links", json_integer(ps->links), bad);
  report_jset(o, "nic_bw_Bps", json_real(ps->nic_bw), bad);
  for (uint32_t k = 1; k <= ps->tiers && k <= TS_TIER_MAX; k++)
    report_japp(tiers, json_tier(&ps->tier[k], (int)k, bad), bad);
  report_jset(o, "tiers", tiers, bad);
  report_jset(o, "bisection_bw_Bps", json_real(ps->bisection_bw), bad);
  return o;
}

static json_t *json_summary(const ts_topo *t, const ts_topo_stats *s,
                            int *bad) {
  json_t *o = json_object(), *planes = json_array(), *hist = json_array();
  report_jset(o, "name", json_string(ts_topo_name(t) ? ts_topo_name(t) : ""), bad);
  report_jset(o, "hosts", json_integer(s->hosts), bad);
  report_jset(o, "gpus", json_integer(s->gpus), bad);
  report_jset(o, "gpu_models", json_models(t, bad), bad);
  report_jset(o, "racks", json_integer(s->racks), bad);
  report_jset(o, "sus", json_integer(s->sus), bad);
  report_jset(o, "nodes", json_counts(s->nodes_by_kind, TS_NODE_KIND_COUNT, true, bad), bad);
  report_jset(o, "links", json_counts(s->links_by_kind, TS_LINK_KIND_COUNT, false, bad), bad);
  for (uint32_t p = 0; p < s->plane_count; p++)
    report_japp(planes, json_plane(t, s, p, bad), bad);
  report_jset(o, "planes", planes, bad);
  report_jset(o, "bisection_bw_Bps", json_real(s->bisection_bw), bad);
  report_jset(o, "scale_up_domain", json_integer(s->scale_up_domain), bad);
  report_jset(o, "max_hops", json_integer(s->max_hops), bad);
  for (int h = 0; h < 16; h++)
    report_japp(hist, json_integer(s->hop_hist[h]), bad);
  report_jset(o, "hop_hist", hist, bad);
  return o;
}

int ts_report_topo_json(const ts_topo *t, const ts_topo_stats *s, FILE *out) {
  int bad = 0;
  json_t *root = json_summary(t, s, &bad);
  int rc = bad ? TS_ENOMEM : 0;
  if (!rc && json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
    rc = TS_EIO;
  json_decref(root);
  if (!rc) fputc('\n', out);
  return rc ? rc : stream_status(out);
}

/* ---- GPU matrix ---- */

static const char *const legend =
    "\nLegend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect "
    "between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between "
    "PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge "
    "(typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing "
    "the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

/* "0-23,48-71" from NCCL's affinity mask (comma-separated 32-bit hex
 * words, most significant first); "N/A" when unknown or unreadable. */
static void affinity_text(const char *mask, char *buf, size_t len) {
  snprintf(buf, len, "N/A");
  if (!mask || !*mask || strspn(mask, "0123456789abcdefABCDEF,") != strlen(mask)) return;
  size_t pos = 0, bits = strlen(mask);
  long run = -1, cpu = 0;
  buf[0] = '\0';
  for (size_t i = bits; i-- > 0;) { /* least significant digit first */
    if (mask[i] == ',') continue;
    int v = mask[i] <= '9' ? mask[i] - '0' : (mask[i] | 0x20) - 'a' + 10;
    for (int b = 0; b < 4; b++, cpu++) {
      int on = (v >> b) & 1;
      if (on && run < 0) run = cpu;
      if (!on && run >= 0) {
        pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0, "%s%ld-%ld",
                                pos ? "," : "", run, cpu - 1);
        run = -1;
      }
    }
  }
  if (run >= 0)
    pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0, "%s%ld-%ld",
                            pos ? "," : "", run, cpu - 1);
  if (!pos) snprintf(buf, len, "N/A");
}

/* Affinity of the CPU a device hangs under (same host, same NUMA label). */
static const char *numa_affinity(const ts_topo *t, uint32_t dev) {
  const ts_node *d = ts_topo_node(t, dev);
  for (uint32_t id = dev; id-- > 0;) { /* CPUs come first in a host */
    const ts_node *c = ts_topo_node(t, id);
    if (c->host != d->host) break;
    if (c->kind == TS_NODE_CPU && c->numa == d->numa) return ts_topo_cpu_affinity(t, id);
  }
  return NULL;
}

/* Devices of one host: its GPUs, then its NICs, in id order. */
typedef struct mdev {
  uint32_t *id;
  uint32_t gpus, nics;
} mdev;

static void matrix_cell(const ts_topo *t, uint32_t a, uint32_t b, FILE *out) {
  char c[16];
  ts_topo_gpu_pair_class(t, a, b, c, sizeof c);
  fprintf(out, "\t%s", a == b ? " X " : c);
}

static void matrix_row(const ts_topo *t, const mdev *m, uint32_t i, FILE *out) {
  uint32_t n = m->gpus + m->nics;
  if (i < m->gpus) fprintf(out, "GPU%u", i);
  else fprintf(out, "NIC%u", i - m->gpus);
  for (uint32_t j = 0; j < n; j++) matrix_cell(t, m->id[i], m->id[j], out);
  if (i >= m->gpus) {
    fputc('\n', out);
    return;
  }
  char aff[1024];
  affinity_text(numa_affinity(t, m->id[i]), aff, sizeof aff);
  int numa = ts_topo_node(t, m->id[i])->numa;
  if (numa >= 0) fprintf(out, "\t%s\t%d\t\tN/A\n", aff, numa);
  else fprintf(out, "\t%s\tN/A\t\tN/A\n", aff);
}

static int matrix_devices(const ts_topo *t, int32_t host, mdev *m) {
  const uint32_t *all;
  uint32_t total = ts_topo_gpus(t, &all);
  memset(m, 0, sizeof *m);
  m->id = malloc(((size_t)total + ts_topo_node_count(t) + 1) * sizeof *m->id);
  if (!m->id) return TS_ENOMEM;
  for (uint32_t i = 0; i < total; i++)
    if (ts_topo_node(t, all[i])->host == host) m->id[m->gpus++] = all[i];
  for (uint32_t id = 0; id < ts_topo_node_count(t); id++) {
    const ts_node *d = ts_topo_node(t, id);
    if (d->kind == TS_NODE_NIC && d->host == host) m->id[m->gpus + m->nics++] = id;
  }
  return m->gpus ? 0 : TS_EUSAGE;
}

int ts_report_topo_matrix(const ts_topo *t, int32_t host, FILE *out) {
  mdev m;
  int rc = matrix_devices(t, host, &m);
  if (rc) {
    free(m.id);
    return rc;
  }
  for (uint32_t j = 0; j < m.gpus; j++) fprintf(out, "\tGPU%u", j);
  for (uint32_t j = 0; j < m.nics; j++) fprintf(out, "\tNIC%u", j);
  fprintf(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
  for (uint32_t i = 0; i < m.gpus + m.nics; i++) matrix_row(t, &m, i, out);
  fputs(legend, out);
  if (m.nics) fputs("\nNIC Legend:\n\n", out);
  for (uint32_t j = 0; j < m.nics; j++) {
    const char *name = ts_topo_node_name(t, m.id[m.gpus + j]);
    const char *slash = strrchr(name, '/');
    fprintf(out, "  NIC%u: %s\n", j, slash ? slash + 1 : name);
  }
  free(m.id);
  return stream_status(out);
}

static json_t *matrix_device_json(const ts_topo *t, const mdev *m, uint32_t i) {
  char label[32], aff[1024];
  int gpu = i < m->gpus;
  snprintf(label, sizeof label, gpu ? "GPU%u" : "NIC%u", gpu ? i : i - m->gpus);
  json_t *d = json_pack("{s:s,s:s,s:s}", "name", label, "device",
                        ts_topo_node_name(t, m->id[i]), "kind", gpu ? "gpu" : "nic");
  if (!d || !gpu) return d;
  affinity_text(numa_affinity(t, m->id[i]), aff, sizeof aff);
  int numa = ts_topo_node(t, m->id[i])->numa;
  json_object_set_new(d, "cpu_affinity", strcmp(aff, "N/A") ? json_string(aff) : json_null());
  json_object_set_new(d, "numa_affinity", numa >= 0 ? json_integer(numa) : json_null());
  return d;
}

int ts_report_topo_matrix_json(const ts_topo *t, int32_t host, FILE *out) {
  mdev m;
  int rc = matrix_devices(t, host, &m);
  if (rc) {
    free(m.id);
    return rc;
  }
  uint32_t n = m.gpus + m.nics;
  json_t *devs = json_array(), *rows = json_array();
  for (uint32_t i = 0; i < n; i++) {
    json_array_append_new(devs, matrix_device_json(t, &m, i));
    json_t *row = json_array();
    for (uint32_t j = 0; j < n; j++) {
      char c[16];
      ts_topo_gpu_pair_class(t, m.id[i], m.id[j], c, sizeof c);
      json_array_append_new(row, json_string(c));
    }
    json_array_append_new(rows, row);
  }
  const char *name = ts_topo_node_name(t, m.id[0]), *slash = strchr(name, '/');
  json_t *j = json_pack("{s:s%,s:o,s:o}", "host", name,
                        slash ? (size_t)(slash - name) : strlen(name), "devices", devs,
                        "classes", rows);
  free(m.id);
  if (!j) return TS_ENOMEM;
  rc = json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(j);
  fputc('\n', out);
  return rc ? TS_EIO : stream_status(out);
}
