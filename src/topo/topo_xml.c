/* topo_xml.c - NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE) ->
 * a node template, so an imported server is stamped out by the same code
 * (topo_template.c) and joins the same planes as one written in YAML.
 *
 * Grammar accepted (what NCCL's src/graph/xml.cc writes; like NCCL, unknown
 * elements and attributes are skipped so newer dumps still load):
 *
 *   system version=N
 *     cpu numaid affinity? arch? vendor? familyid? modelid?    NUMA domain
 *       pci busid class link_speed? link_width?                any depth
 *         pci ...                      class 0x0604xx: PCIe switch/bridge
 *         gpu dev? sm? rank? gdr?      inside a pci of class 0x03xxxx
 *           nvlink target count tclass   tclass 0x03: GPU peer,
 *                                        0x068000: NVSwitch (by target)
 *         nic
 *           net name? dev? speed? port? gdr?   one NIC port per net
 *       nic                            NIC on the CPU (no PCIe detail)
 *         net ...
 *
 * Mapping (docs/topology-format.md section 17): a pci of class 0x03 is a
 * GPU (with or without a gpu child: cloud files often give only the bus
 * skeleton), class 0x02 a NIC (one port per net child, or one unnamed
 * port), class 0x0604 or any other class with children a PCIe switch.
 * Link width 0 means x16 and an unknown speed means 8 GT/s, as in NCCL.
 * NVLink bandwidth per link and the socket link follow NCCL's own planning
 * figures (src/graph/topo.h). GPUs and NICs are numbered by `dev` when every
 * one has a distinct dev, else in document order.
 *
 * Cost: O(file) to parse (libxml2, no network, no entity substitution) plus
 * O(g * l) to match g GPUs' l NVLink targets; a node file is tiny. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "topo/topo_load.h"

#define XML_MAX_BYTES (64u << 20)
#define XML_MAX_DEV 1024u     /* GPUs or NICs per node, as in YAML */
#define XML_MAX_CPUS 64u
#define XML_MAX_SWITCHES 256u
#define XML_MAX_NVL 64u       /* nvlink elements per GPU */
#define BUSID_LEN 32

typedef struct x_nvl {
  char target[BUSID_LEN];
  uint32_t count;
  int to_switch;              /* tclass 0x068000, else a GPU peer */
} x_nvl;

typedef struct x_gpu {
  att_ref parent;
  link_params link;
  char busid[BUSID_LEN];
  long dev, sm, line;
  uint32_t device;            /* PCI device id, 0 if absent */
  x_nvl *nvl;
  uint32_t nvl_count;
} x_gpu;

typedef struct x_nic {
  att_ref parent;
  link_params link;
  char name[64];
  long dev;
  double mbps;                /* 0: unknown */
} x_nic;

typedef struct x_cpu {
  int16_t numa;
  const char *affinity;       /* owned by the topology */
  double smp_bw;              /* NCCL's socket-link figure, bytes/s */
  bool amd;                   /* vendor AuthenticAMD */
} x_cpu;

typedef struct x_state {
  topo_loader *L;
  const char *path;
  x_cpu cpus[XML_MAX_CPUS];
  uint32_t ncpu;
  att_ref sw_parent[XML_MAX_SWITCHES];
  link_params sw_link[XML_MAX_SWITCHES];
  uint32_t nsw;
  x_gpu *gpus;
  uint32_t ngpu;
  x_nic *nics;
  uint32_t nnic;
} x_state;

static int x_err(const x_state *s, const xmlNode *n, int code, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

static int x_err(const x_state *s, const xmlNode *n, int code, const char *fmt,
                 ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ts_diag_set(s->L->sc.d, code, s->path, n ? (int)xmlGetLineNo(n) : 0, 0,
                     "%s", msg);
}

/* Copies attribute `name` into buf ("" when absent); returns 1 if present. */
static int x_attr(const xmlNode *n, const char *name, char *buf, size_t len) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
  buf[0] = '\0';
  if (!v) return 0;
  snprintf(buf, len, "%s", (const char *)v);
  xmlFree(v);
  return 1;
}

/* Integer attribute in C syntax (decimal or 0x hex, as NCCL's strtol(..., 0));
 * absent -> def. Anything else is an error naming the line. */
static int x_long(const x_state *s, const xmlNode *n, const char *name, long def,
                  long lo, long hi, long *out) {
  char buf[64], *end;
  *out = def;
  if (!x_attr(n, name, buf, sizeof buf)) return 0;
  long v = strtol(buf, &end, 0);
  if (!buf[0] || *end || v < lo || v > hi)
    return x_err(s, n, TS_ESCHEMA, "<%s %s=\"%s\">: expected a whole number "
                 "from %ld to %ld", (const char *)n->name, name, buf, lo, hi);
  *out = v;
  return 0;
}

static int is_elem(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* PCIe generation from NCCL's link_speed strings ("16 GT/s", "32.0 GT/s
 * PCIe"); unknown or empty is gen 3, NCCL's fallback. */
static unsigned pcie_gen(const char *speed) {
  static const struct { const char *rate; unsigned gen; } t[] = {
      {"2.5", 1}, {"5", 2}, {"5.0", 2}, {"8", 3}, {"8.0", 3}, {"16", 4},
      {"16.0", 4}, {"32", 5}, {"32.0", 5}, {"64", 6}, {"64.0", 6}};
  char num[16];
  size_t k = strcspn(speed, " ");
  if (k == 0 || k >= sizeof num || strncmp(speed + k, " GT/s", 5)) return 3;
  memcpy(num, speed, k);
  num[k] = '\0';
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(num, t[i].rate)) return t[i].gen;
  return 3;
}

/* Host-side link of a pci element, built exactly like YAML's `gen`/`width`. */
static int pci_link(const x_state *s, const xmlNode *n, link_params *lp) {
  char speed[64];
  long width;
  x_attr(n, "link_speed", speed, sizeof speed);
  if (x_long(s, n, "link_width", 16, 0, 32, &width)) return TS_ESCHEMA;
  if (width == 0) width = 16; /* NCCL: width not reported by sysfs */
  memset(lp, 0, sizeof *lp);
  lp->kind = TS_LINK_PCIE;
  lp->gen = (uint8_t)pcie_gen(speed);
  lp->width = (uint16_t)width;
  lp->bandwidth = topo_pcie_lane_rate(lp->gen) * (double)width * TOPO_PCIE_EFFICIENCY;
  lp->latency = TOPO_PCIE_HOP_LATENCY_PS;
  return 0;
}

static void *x_grow(void *arr, uint32_t n, size_t sz) {
  if (n & (n - 1)) return arr; /* grow at powers of two */
  return realloc(arr, (n ? 2 * (size_t)n : 4) * sz);
}

/* ---- NICs ---- */

static int add_net(x_state *s, const xmlNode *n, att_ref parent,
                   const link_params *lp) {
  if (s->nnic == XML_MAX_DEV)
    return x_err(s, n, TS_ELIMIT, "more than %u NIC ports in one node", XML_MAX_DEV);
  x_nic *g = x_grow(s->nics, s->nnic, sizeof *s->nics);
  if (!g) return x_err(s, n, TS_ENOMEM, "out of memory");
  s->nics = g;
  x_nic *c = &s->nics[s->nnic];
  memset(c, 0, sizeof *c);
  c->parent = parent;
  c->link = *lp;
  long speed = 0;
  if (n && (x_long(s, n, "dev", -1, -1, 1L << 20, &c->dev) ||
            x_long(s, n, "speed", 0, -1, 1L << 30, &speed)))
    return TS_ESCHEMA;
  if (!n) c->dev = -1;
  if (n) x_attr(n, "name", c->name, sizeof c->name);
  c->mbps = speed > 0 ? (double)speed : 0; /* NCCL writes -1 when unknown */
  s->nnic++;
  return 0;
}

/* A nic element: one port per net child; a nic with no net is one port. */
static int add_nic(x_state *s, const xmlNode *nic, att_ref parent,
                   const link_params *lp) {
  uint32_t before = s->nnic;
  for (const xmlNode *c = nic ? nic->children : NULL; c; c = c->next)
    if (is_elem(c, "net")) {
      int rc = add_net(s, c, parent, lp);
      if (rc) return rc;
    }
  return s->nnic == before ? add_net(s, NULL, parent, lp) : 0;
}

/* ---- GPUs ---- */

static int add_nvlink(x_state *s, const xmlNode *n, x_gpu *g) {
  char tclass[32];
  long count;
  if (g->nvl_count == XML_MAX_NVL)
    return x_err(s, n, TS_ELIMIT, "more than %u nvlink elements in one GPU", XML_MAX_NVL);
  if (x_long(s, n, "count", 1, 1, 64, &count)) return TS_ESCHEMA;
  x_nvl v;
  memset(&v, 0, sizeof v);
  x_attr(n, "tclass", tclass, sizeof tclass);
  x_attr(n, "target", v.target, sizeof v.target);
  if (!v.target[0])
    return x_err(s, n, TS_ESCHEMA, "<nvlink> needs a target bus id");
  v.count = (uint32_t)count;
  v.to_switch = !strncmp(tclass, "0x0680", 6) && strcmp(tclass, "0x068001");
  if (!v.to_switch && strncmp(tclass, "0x03", 4)) return 0; /* CPU (POWER9): skipped */
  x_nvl *a = x_grow(g->nvl, g->nvl_count, sizeof *g->nvl);
  if (!a) return x_err(s, n, TS_ENOMEM, "out of memory");
  g->nvl = a;
  g->nvl[g->nvl_count++] = v;
  return 0;
}

static int add_gpu(x_state *s, const xmlNode *pci, att_ref parent,
                   const link_params *lp) {
  if (s->ngpu == XML_MAX_DEV)
    return x_err(s, pci, TS_ELIMIT, "more than %u GPUs in one node", XML_MAX_DEV);
  x_gpu *a = x_grow(s->gpus, s->ngpu, sizeof *s->gpus);
  if (!a) return x_err(s, pci, TS_ENOMEM, "out of memory");
  s->gpus = a;
  x_gpu *g = &s->gpus[s->ngpu++];
  memset(g, 0, sizeof *g);
  g->parent = parent;
  g->link = *lp;
  g->line = xmlGetLineNo(pci);
  x_attr(pci, "busid", g->busid, sizeof g->busid);
  long device;
  if (x_long(s, pci, "device", 0, 0, 0xffff, &device)) return TS_ESCHEMA;
  g->device = (uint32_t)device;
  g->dev = g->sm = -1;
  for (const xmlNode *c = pci->children; c; c = c->next) {
    if (!is_elem(c, "gpu")) continue;
    if (x_long(s, c, "dev", -1, -1, 1L << 20, &g->dev) ||
        x_long(s, c, "sm", -1, -1, 10000, &g->sm))
      return TS_ESCHEMA;
    for (const xmlNode *v = c->children; v; v = v->next)
      if (is_elem(v, "nvlink")) {
        int rc = add_nvlink(s, v, g);
        if (rc) return rc;
      }
  }
  return 0;
}

/* ---- the PCIe tree ---- */

static int walk_pci(x_state *s, const xmlNode *pci, att_ref parent, int depth);

static int add_switch(x_state *s, const xmlNode *pci, att_ref parent,
                      const link_params *lp, int depth) {
  if (s->nsw == XML_MAX_SWITCHES)
    return x_err(s, pci, TS_ELIMIT, "more than %u PCIe switches in one node",
                 XML_MAX_SWITCHES);
  uint32_t me = s->nsw++;
  s->sw_parent[me] = parent;
  s->sw_link[me] = *lp;
  att_ref self = {ATT_PCIE, me};
  for (const xmlNode *c = pci->children; c; c = c->next)
    if (is_elem(c, "pci")) {
      int rc = walk_pci(s, c, self, depth + 1);
      if (rc) return rc;
    }
  return 0;
}

static int has_pci_child(const xmlNode *n) {
  for (const xmlNode *c = n->children; c; c = c->next)
    if (is_elem(c, "pci")) return 1;
  return 0;
}

static const xmlNode *child(const xmlNode *n, const char *name) {
  for (const xmlNode *c = n->children; c; c = c->next)
    if (is_elem(c, name)) return c;
  return NULL;
}

static int walk_pci(x_state *s, const xmlNode *pci, att_ref parent, int depth) {
  char cls[32];
  link_params lp;
  if (depth > 32) return x_err(s, pci, TS_ELIMIT, "PCIe tree deeper than 32 levels");
  if (!x_attr(pci, "class", cls, sizeof cls))
    return x_err(s, pci, TS_ESCHEMA, "<pci> needs a class (e.g. 0x060400 "
                 "switch, 0x030200 GPU, 0x020000 NIC)");
  if (pci_link(s, pci, &lp)) return TS_ESCHEMA;
  if (!strncmp(cls, "0x03", 4)) return add_gpu(s, pci, parent, &lp);
  if (!strncmp(cls, "0x02", 4) || child(pci, "nic"))
    return add_nic(s, child(pci, "nic"), parent, &lp);
  if (!strncmp(cls, "0x0680", 6)) return 0; /* an NVSwitch's own PCIe port */
  if (!strncmp(cls, "0x0604", 6) || has_pci_child(pci))
    return add_switch(s, pci, parent, &lp, depth);
  return 0; /* another leaf device (storage, USB...): not modelled */
}

/* ---- CPUs ---- */

/* NCCL's planning figure for the link between sockets (src/graph/topo.h):
 * GB/s by vendor and generation. */
static double smp_bw(const x_state *s, const xmlNode *cpu) {
  char arch[32], vendor[32];
  long family = 0, model = 0;
  x_attr(cpu, "arch", arch, sizeof arch);
  x_attr(cpu, "vendor", vendor, sizeof vendor);
  if (x_long(s, cpu, "familyid", 0, 0, 1L << 20, &family) ||
      x_long(s, cpu, "modelid", 0, 0, 1L << 20, &model))
    return -1;
  double gbs = 6.0; /* ARM, unknown */
  if (!strcmp(arch, "ppc64")) gbs = 32.0;
  else if (!strcmp(vendor, "AuthenticAMD")) gbs = 16.0;
  else if (!strcmp(vendor, "GenuineIntel"))
    gbs = family != 6 ? 6.0 : model >= 0xCF ? 40.0 : model >= 0x8F ? 22.0
          : model >= 0x55 ? 10.0 : 6.0;
  return gbs * 1e9;
}

static int walk_cpu(x_state *s, const xmlNode *cpu) {
  if (s->ncpu == XML_MAX_CPUS)
    return x_err(s, cpu, TS_ELIMIT, "more than %u <cpu> elements", XML_MAX_CPUS);
  x_cpu *c = &s->cpus[s->ncpu];
  long numa;
  if (x_long(s, cpu, "numaid", (long)s->ncpu, -1, 32767, &numa)) return TS_ESCHEMA;
  c->numa = (int16_t)(numa < 0 ? (long)s->ncpu : numa);
  char aff[256];
  c->affinity = x_attr(cpu, "affinity", aff, sizeof aff) && aff[0]
                    ? topo_strdup(s->L->t, aff) : NULL;
  if ((c->smp_bw = smp_bw(s, cpu)) < 0) return TS_ESCHEMA;
  char vendor[32];
  c->amd = x_attr(cpu, "vendor", vendor, sizeof vendor) &&
           !strcmp(vendor, "AuthenticAMD");
  att_ref self = {ATT_CPU, s->ncpu++};
  link_params def;
  memset(&def, 0, sizeof def); /* a NIC on the CPU: YAML's default link */
  def.kind = TS_LINK_PCIE;
  def.gen = 4;
  def.width = 16;
  def.bandwidth = topo_pcie_lane_rate(4) * 16 * TOPO_PCIE_EFFICIENCY;
  def.latency = TOPO_PCIE_HOP_LATENCY_PS;
  for (const xmlNode *n = cpu->children; n; n = n->next) {
    int rc = 0;
    if (is_elem(n, "pci")) rc = walk_pci(s, n, self, 0);
    else if (is_elem(n, "nic")) rc = add_nic(s, n, self, &def);
    if (rc) return rc;
  }
  return 0;
}

/* ---- reading the file ---- */

/* The first error libxml2 raises (later ones are usually consequences). */
typedef struct x_first {
  int set, line, col;
  char msg[400];
} x_first;

static void x_on_error(void *ud, xmlErrorPtr e) {
  x_first *f = ((xmlParserCtxtPtr)ud)->_private;
  if (!f || f->set || !e || e->level < XML_ERR_ERROR) return;
  f->set = 1;
  f->line = e->line;
  f->col = e->int2;
  snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "not well-formed XML");
  f->msg[strcspn(f->msg, "\n")] = '\0';
}

static int x_read(x_state *s, xmlDoc **doc) {
  struct stat st;
  ts_diag *d = s->L->sc.d;
  if (stat(s->path, &st))
    return ts_diag_set(d, TS_ENOINPUT, s->path, 0, 0, "cannot open NCCL topology XML");
  if (st.st_size > (off_t)XML_MAX_BYTES)
    return ts_diag_set(d, TS_ELIMIT, s->path, 0, 0, "file is %jd bytes; the "
                       "limit is %u bytes", (intmax_t)st.st_size, XML_MAX_BYTES);
  xmlParserCtxtPtr ctx = xmlNewParserCtxt();
  if (!ctx) return ts_diag_set(d, TS_ENOMEM, s->path, 0, 0, "out of memory");
  /* No network, no entity substitution, no DTD loading, quiet: errors come
   * back through the context and are reported once with their line. */
  x_first first = {0, 0, 0, ""};
  ctx->_private = &first;
  ctx->sax->serror = x_on_error;
  *doc = xmlCtxtReadFile(ctx, s->path, NULL,
                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  int rc = 0;
  if (!*doc || first.set) {
    xmlFreeDoc(*doc); /* a recovered document is still an error */
    *doc = NULL;
    rc = ts_diag_set(d, TS_ESYNTAX, s->path, first.line, first.col, "XML: %s",
                     first.set ? first.msg : "not well-formed XML");
  }
  xmlFreeParserCtxt(ctx);
  return rc;
}

static int x_walk_root(x_state *s, const xmlNode *root) {
  if (!root)
    return ts_diag_set(s->L->sc.d, TS_ENOINPUT, s->path, 0, 0, "empty XML document");
  if (is_elem(root, "graphs"))
    return x_err(s, root, TS_ESCHEMA, "this is an NCCL graph file "
                 "(NCCL_GRAPH_FILE: rings and trees NCCL searched), not a "
                 "topology; give the NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE "
                 "(<system>) of the same machine");
  if (!is_elem(root, "system"))
    return x_err(s, root, TS_ESCHEMA, "root element <%s> is not <system>: "
                 "expected an NCCL topology file (NCCL_TOPO_DUMP_FILE)",
                 (const char *)root->name);
  long version;
  if (x_long(s, root, "version", 1, 0, 1000, &version)) return TS_ESCHEMA;
  for (const xmlNode *n = root->children; n; n = n->next)
    if (is_elem(n, "cpu")) {
      int rc = walk_cpu(s, n);
      if (rc) return rc;
    }
  if (!s->ncpu) return x_err(s, root, TS_ESCHEMA, "<system> has no <cpu>");
  return 0;
}

/* ---- building the template ---- */

/* Dense-BF16 figures of GPUs NCCL dumps name, by PCI device id, then by SM
 * (compute capability x 10). Datasheet numbers, as in the bundled YAML. */
typedef struct known_gpu {
  uint32_t device;
  long sm;
  ts_gpu_model m;
} known_gpu;

static const known_gpu known[] = {
    {0x20b0, 80, {"A100-SXM4-40GB", 312e12, 0, 40000000000ULL, 1555e9, 108}},
    {0x20b2, 80, {"A100-SXM4-80GB", 312e12, 0, 80000000000ULL, 2039e9, 108}},
    {0x20b5, 80, {"A100-PCIe-80GB", 312e12, 0, 80000000000ULL, 1935e9, 108}},
    {0x2330, 90, {"H100-SXM5-80GB", 989e12, 1979e12, 80000000000ULL, 3350e9, 132}},
    {0, 70, {"V100 (sm 70)", 125e12, 0, 32000000000ULL, 900e9, 80}},
    {0, 80, {"A100-SXM4-80GB", 312e12, 0, 80000000000ULL, 2039e9, 108}},
    {0, 90, {"H100-SXM5-80GB", 989e12, 1979e12, 80000000000ULL, 3350e9, 132}},
    {0, 100, {"B200 (sm 100)", 2250e12, 4500e12, 180000000000ULL, 8000e9, 148}},
};

/* GPU model: the template's gpu_model, else the table, else "unknown"
 * with zero figures (the file named neither device nor SM). */
static int pick_model(x_state *s, const char *name, uint16_t *out) {
  ts_topo *t = s->L->t;
  const ts_gpu_model *m = NULL;
  static const ts_gpu_model unknown = {"unknown (no sm or device in XML)", 0, 0, 0, 0, 0};
  const x_gpu *g = s->ngpu ? &s->gpus[0] : NULL;
  for (size_t i = 0; !name && g && !m && i < sizeof known / sizeof known[0]; i++)
    if (known[i].device ? known[i].device == g->device : known[i].sm == g->sm)
      m = &known[i].m;
  const char *want = name ? name : m ? m->name : unknown.name;
  for (uint32_t i = 0; i < t->model_count; i++)
    if (!strcmp(t->models[i].name, want)) return (*out = (uint16_t)i), 0;
  if (name)
    return ts_diag_set(s->L->sc.d, TS_ESCHEMA, s->path, 0, 0, "gpu_model '%s' "
                       "is not defined under 'gpu_models'", name);
  ts_gpu_model copy = m ? *m : unknown;
  copy.name = topo_strdup(t, want);
  *out = topo_add_model(t, &copy);
  return *out == UINT16_MAX ? TS_ENOMEM : 0;
}

static int by_dev(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Order by `dev` when every device has a distinct one (stable otherwise):
 * perm[i] = the record placed at position i. devs[] is clobbered. */
static void dev_order(long (*devs)[2], uint32_t n, uint32_t *perm) {
  int ok = 1;
  for (uint32_t i = 0; i < n; i++) {
    ok &= devs[i][0] >= 0;
    devs[i][1] = (long)i;
  }
  if (ok) qsort(devs, n, sizeof *devs, by_dev);
  for (uint32_t i = 1; ok && i < n; i++) ok = devs[i][0] != devs[i - 1][0];
  for (uint32_t i = 0; i < n; i++) perm[i] = ok ? (uint32_t)devs[i][1] : i;
}

static int order_devices(x_state *s) {
  uint32_t n = s->ngpu > s->nnic ? s->ngpu : s->nnic;
  long (*devs)[2] = calloc(n ? n : 1, sizeof *devs);
  uint32_t *perm = calloc(n ? n : 1, sizeof *perm);
  x_gpu *g = calloc(s->ngpu ? s->ngpu : 1, sizeof *g);
  x_nic *c = calloc(s->nnic ? s->nnic : 1, sizeof *c);
  int rc = devs && perm && g && c ? 0 : TS_ENOMEM;
  if (!rc) {
    for (uint32_t i = 0; i < s->ngpu; i++) devs[i][0] = s->gpus[i].dev;
    dev_order(devs, s->ngpu, perm);
    for (uint32_t i = 0; i < s->ngpu; i++) g[i] = s->gpus[perm[i]];
    for (uint32_t i = 0; i < s->nnic; i++) devs[i][0] = s->nics[i].dev;
    dev_order(devs, s->nnic, perm);
    for (uint32_t i = 0; i < s->nnic; i++) c[i] = s->nics[perm[i]];
    if (s->ngpu) memcpy(s->gpus, g, s->ngpu * sizeof *g);
    if (s->nnic) memcpy(s->nics, c, s->nnic * sizeof *c);
  }
  free(devs);
  free(perm);
  free(g);
  free(c);
  return rc;
}

static int fill_cpus(x_state *s, topo_tmpl *tm) {
  tm->cpus = s->ncpu;
  tm->cpu_numa = calloc(s->ncpu, sizeof *tm->cpu_numa);
  tm->cpu_affinity = calloc(s->ncpu, sizeof *tm->cpu_affinity);
  if (!tm->cpu_numa || !tm->cpu_affinity) return TS_ENOMEM;
  double bw = 0;
  for (uint32_t i = 0; i < s->ncpu; i++) {
    tm->cpu_numa[i] = s->cpus[i].numa;
    tm->cpu_affinity[i] = s->cpus[i].affinity;
    if (!i || s->cpus[i].smp_bw < bw) bw = s->cpus[i].smp_bw;
    if (s->cpus[i].amd) tm->cpu_amd = true;
  }
  tm->cpu_mesh = true;
  tm->cpu_link.kind = TS_LINK_CPU;
  tm->cpu_link.width = 1;
  tm->cpu_link.bandwidth = bw;
  tm->cpu_link.latency = 150000; /* 150 ns, as the bundled YAML's UPI links */
  return 0;
}

static int fill_pcie(x_state *s, topo_tmpl *tm) {
  tm->pcie_count = s->nsw;
  tm->pcie_attach = calloc(s->nsw ? s->nsw : 1, sizeof *tm->pcie_attach);
  tm->pcie_links = calloc(s->nsw ? s->nsw : 1, sizeof *tm->pcie_links);
  if (!tm->pcie_attach || !tm->pcie_links) return TS_ENOMEM;
  memcpy(tm->pcie_attach, s->sw_parent, s->nsw * sizeof *s->sw_parent);
  memcpy(tm->pcie_links, s->sw_link, s->nsw * sizeof *s->sw_link);
  return 0;
}

static int fill_gpus(x_state *s, topo_tmpl *tm) {
  tm->gpu_count = s->ngpu;
  tm->gpu_attach = calloc(s->ngpu ? s->ngpu : 1, sizeof *tm->gpu_attach);
  tm->gpu_links = calloc(s->ngpu ? s->ngpu : 1, sizeof *tm->gpu_links);
  if (!tm->gpu_attach || !tm->gpu_links) return TS_ENOMEM;
  for (uint32_t i = 0; i < s->ngpu; i++) {
    tm->gpu_attach[i] = s->gpus[i].parent;
    tm->gpu_links[i] = s->gpus[i].link;
  }
  return 0;
}

/* NIC names: NCCL's net names (mlx5_0) when all are usable and distinct. */
static int usable_names(const x_state *s) {
  for (uint32_t i = 0; i < s->nnic; i++) {
    const char *n = s->nics[i].name;
    if (!n[0] || strpbrk(n, "/ \t") || !strncmp(n, "cpu", 3) ||
        !strncmp(n, "gpu", 3) || !strncmp(n, "pcie", 4) || !strncmp(n, "nvsw", 4))
      return 0;
    for (uint32_t j = 0; j < i; j++)
      if (!strcmp(n, s->nics[j].name)) return 0;
  }
  return 1;
}

static int fill_nics(x_state *s, topo_tmpl *tm, uint16_t plane) {
  if (!s->nnic) return 0;
  if (plane == TS_NO_PLANE)
    return ts_diag_set(s->L->sc.d, TS_ESCHEMA, s->path, 0, 0, "the file has %u "
                       "NIC ports but the template names no plane for them: "
                       "declare a backend plane", s->nnic);
  tm->nics = calloc(1, sizeof *tm->nics);
  if (!tm->nics) return TS_ENOMEM;
  tm->nic_groups = 1;
  nic_group *ng = tm->nics;
  const plane_in *pi = &s->L->planes[plane];
  ng->prefix = "nic";
  ng->plane = plane;
  ng->count = s->nnic;
  ng->speed = pi->line_rate * pi->efficiency;
  ng->rails = !strcmp(s->L->t->planes[plane].generator, "rail_optimized");
  ng->attach = calloc(s->nnic, sizeof *ng->attach);
  ng->links = calloc(s->nnic, sizeof *ng->links);
  ng->speeds = calloc(s->nnic, sizeof *ng->speeds);
  ng->names = usable_names(s) ? calloc(s->nnic, sizeof *ng->names) : NULL;
  if (!ng->attach || !ng->links || !ng->speeds) return TS_ENOMEM;
  for (uint32_t i = 0; i < s->nnic; i++) {
    const x_nic *c = &s->nics[i];
    ng->attach[i] = c->parent;
    ng->links[i] = c->link;
    /* NCCL's speed is Mb/s of line rate; the plane's efficiency applies as
     * to any NIC speed written in YAML. */
    ng->speeds[i] = c->mbps > 0 ? c->mbps * 1e6 / 8 * pi->efficiency : ng->speed;
    if (ng->names && !(ng->names[i] = topo_strdup(s->L->t, c->name))) return TS_ENOMEM;
  }
  return 0;
}

/* NCCL's per-link NVLink planning figure by SM (src/graph/topo.h). */
static double nvlink_bw(long sm) {
  double gbs = sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0
               : sm >= 80 ? 20.0 : sm >= 70 ? 20.0 : sm >= 60 ? 18.0 : 20.0;
  return gbs * 1e9;
}

static int find_gpu(const x_state *s, const char *busid) {
  for (uint32_t i = 0; i < s->ngpu; i++)
    if (!strcasecmp(s->gpus[i].busid, busid)) return (int)i;
  return -1;
}

static int cmp_busid(const void *a, const void *b) {
  return strcasecmp((const char *)a, (const char *)b);
}

/* Distinct NVSwitch targets, sorted, so nvsw0 is the lowest bus id. */
static uint32_t nvswitch_ids(const x_state *s, char (*ids)[BUSID_LEN]) {
  uint32_t n = 0;
  for (uint32_t g = 0; g < s->ngpu; g++)
    for (uint32_t k = 0; k < s->gpus[g].nvl_count; k++) {
      const x_nvl *v = &s->gpus[g].nvl[k];
      uint32_t j = 0;
      while (j < n && strcasecmp(ids[j], v->target)) j++;
      if (v->to_switch && j == n && n < XML_MAX_NVL) snprintf(ids[n++], BUSID_LEN, "%s", v->target);
    }
  qsort(ids, n, sizeof *ids, cmp_busid);
  return n;
}

static int fill_switch_links(x_state *s, topo_tmpl *tm, char (*ids)[BUSID_LEN]) {
  tm->nvl_gpu_switch = calloc((size_t)s->ngpu * tm->nvl_switches, sizeof *tm->nvl_gpu_switch);
  tm->nvl_per_switch = calloc(tm->nvl_switches, sizeof *tm->nvl_per_switch);
  if (!tm->nvl_gpu_switch || !tm->nvl_per_switch) return TS_ENOMEM;
  for (uint32_t g = 0; g < s->ngpu; g++)
    for (uint32_t k = 0; k < s->gpus[g].nvl_count; k++) {
      const x_nvl *v = &s->gpus[g].nvl[k];
      for (uint32_t j = 0; v->to_switch && j < tm->nvl_switches; j++)
        if (!strcasecmp(ids[j], v->target)) tm->nvl_gpu_switch[g * tm->nvl_switches + j] += v->count;
    }
  return 0;
}

/* GPU-GPU NVLinks: one bundle per pair, the width the lower GPU lists
 * (else the higher one). A GPU naming itself (Azure NC A100 v4 files) or a
 * GPU not in the file joins nothing, as in NCCL. */
static int fill_pairs(x_state *s, topo_tmpl *tm) {
  uint32_t cap = 0;
  for (uint32_t g = 0; g < s->ngpu; g++) cap += s->gpus[g].nvl_count;
  tm->pairs = calloc(cap ? cap : 1, sizeof *tm->pairs);
  tm->pair_links = calloc(cap ? cap : 1, sizeof *tm->pair_links);
  if (!tm->pairs || !tm->pair_links) return TS_ENOMEM;
  for (uint32_t g = 0; g < s->ngpu; g++)
    for (uint32_t k = 0; k < s->gpus[g].nvl_count; k++) {
      const x_nvl *v = &s->gpus[g].nvl[k];
      int p = v->to_switch ? -1 : find_gpu(s, v->target);
      if (p < 0 || (uint32_t)p == g) continue;
      uint32_t a = g < (uint32_t)p ? g : (uint32_t)p, b = g ^ a ^ (uint32_t)p, i = 0;
      while (i < tm->pair_count && (tm->pairs[i][0] != a || tm->pairs[i][1] != b)) i++;
      if (i < tm->pair_count) continue; /* the lower GPU's figure came first */
      tm->pairs[i][0] = a;
      tm->pairs[i][1] = b;
      tm->pair_links[tm->pair_count++] = v->count;
    }
  return 0;
}

static int fill_nvlink(x_state *s, topo_tmpl *tm) {
  char ids[XML_MAX_NVL][BUSID_LEN];
  tm->nvl_bw = nvlink_bw(s->ngpu ? s->gpus[0].sm : -1);
  tm->nvl_lat = TOPO_NVLINK_HOP_LATENCY_PS;
  tm->nvl_switches = nvswitch_ids(s, ids);
  tm->nvl = tm->nvl_switches ? NVL_SWITCH : NVL_NONE;
  int rc = tm->nvl_switches ? fill_switch_links(s, tm, ids) : 0;
  if (!rc) rc = fill_pairs(s, tm);
  if (!rc && tm->pair_count && tm->nvl == NVL_NONE) tm->nvl = NVL_PAIRS;
  return rc;
}

static void x_free(x_state *s) {
  for (uint32_t i = 0; i < s->ngpu; i++) free(s->gpus[i].nvl);
  free(s->gpus);
  free(s->nics);
}

int topo_xml_template(topo_loader *L, const char *path, uint16_t nic_plane,
                      const char *model_name, topo_tmpl *tm) {
  x_state *s = calloc(1, sizeof *s);
  if (!s) return ts_diag_set(L->sc.d, TS_ENOMEM, path, 0, 0, "out of memory");
  s->L = L;
  s->path = path;
  xmlDoc *doc = NULL;
  int rc = x_read(s, &doc);
  if (!rc) rc = x_walk_root(s, xmlDocGetRootElement(doc));
  xmlFreeDoc(doc);
  if (!rc) rc = order_devices(s);
  if (!rc && s->ngpu) rc = pick_model(s, model_name, &tm->model);
  if (!rc) rc = fill_cpus(s, tm);
  if (!rc) rc = fill_pcie(s, tm);
  if (!rc) rc = fill_gpus(s, tm);
  if (!rc) rc = fill_nics(s, tm, nic_plane);
  if (!rc) rc = fill_nvlink(s, tm);
  if (rc == TS_ENOMEM) ts_diag_set(L->sc.d, rc, path, 0, 0, "out of memory");
  x_free(s);
  free(s);
  return rc;
}
