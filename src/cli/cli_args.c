/* cli_args.c - option-value parsers shared by the commands (cli_args.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "topsim/ts_checked.h"
#include "topsim/ts_step.h"

int cli_parse_uint(const char *cmd, const char *opt, const char *s,
                   uint64_t min, uint64_t max, uint64_t *out) {
  char *end;
  if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 19) {
    cli_usage_error(cmd, "%s: '%s' is not a whole number", opt, s);
    return -1;
  }
  unsigned long long v = strtoull(s, &end, 10);
  if (v < min || v > max) {
    cli_usage_error(cmd, "%s: %llu is out of range %llu..%llu", opt, v,
                    (unsigned long long)min, (unsigned long long)max);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_bytes(const char *cmd, const char *opt, const char *s,
                    uint64_t *out) {
  size_t len = strlen(s), digits = strspn(s, "0123456789");
  uint64_t mult = 1;
  if (digits && digits + 1 == len) {
    switch (s[len - 1]) {
    case 'K': case 'k': mult = 1ULL << 10; break;
    case 'M': case 'm': mult = 1ULL << 20; break;
    case 'G': case 'g': mult = 1ULL << 30; break;
    case 'T': case 't': mult = 1ULL << 40; break;
    default: digits = 0;
    }
  } else if (digits != len) {
    digits = 0;
  }
  if (!digits || digits > 15) {
    cli_usage_error(cmd, "%s: '%s' is not a size (e.g. 8, 64K, 1M, 8G)", opt, s);
    return -1;
  }
  if (ts_mul_u64(strtoull(s, NULL, 10), mult, out)) {
    cli_usage_error(cmd, "%s: '%s' does not fit in 64 bits of bytes", opt, s);
    return -1;
  }
  return 0;
}

int cli_parse_gpu(const char *cmd, const ts_topo *t, const char *s,
                  uint32_t *out) {
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus), id;
  if (*s && strspn(s, "0123456789") == strlen(s)) {
    unsigned long v = strtoul(s, NULL, 10);
    if (v < n) {
      *out = gpus[v];
      return 0;
    }
    cli_usage_error(cmd, "GPU %lu does not exist: the topology has %u GPUs", v, n);
    return -1;
  }
  if (ts_topo_find_node(t, s, &id) == 0 && ts_topo_node(t, id)->kind == TS_NODE_GPU) {
    *out = id;
    return 0;
  }
  cli_usage_error(cmd, "'%s' names no GPU (use an index or a name like dgx0/gpu3)", s);
  return -1;
}

/* GPUs whose label (host, rack or su) equals v, in topology order. */
static uint32_t select_label(const ts_topo *t, char which, long v, uint32_t *out) {
  const uint32_t *gpus;
  uint32_t n = ts_topo_gpus(t, &gpus), k = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ts_node *g = ts_topo_node(t, gpus[i]);
    int32_t label = which == 'n' ? g->host : which == 'r' ? g->rack : g->su;
    if (label == v) out[k++] = gpus[i];
  }
  return k;
}

static int parse_list(const char *cmd, const ts_topo *t, const char *s,
                      uint32_t *out, uint32_t *n) {
  char *copy = strdup(s), *save = NULL;
  if (!copy) return -1;
  *n = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (cli_parse_gpu(cmd, t, tok, &out[(*n)++])) {
      free(copy);
      return -1;
    }
  free(copy);
  return 0;
}

int cli_parse_gpu_set(const char *cmd, const ts_topo *t, const char *s,
                      uint32_t **out, uint32_t *n) {
  const uint32_t *gpus;
  uint32_t total = ts_topo_gpus(t, &gpus);
  size_t commas = 1;
  for (const char *p = s; *p; p++) commas += *p == ',';
  *out = malloc((total > commas ? total : commas) * sizeof **out + 1);
  if (!*out) return -1;
  const char *colon = strchr(s, ':');
  if (!strcmp(s, "all")) {
    memcpy(*out, gpus, (size_t)total * sizeof **out);
    *n = total;
  } else if (colon && (!strncmp(s, "node:", 5) || !strncmp(s, "rack:", 5) ||
                       !strncmp(s, "su:", 3) || !strncmp(s, "first:", 6))) {
    uint64_t v;
    if (cli_parse_uint(cmd, "--gpus", colon + 1, 0, UINT32_MAX, &v)) return -1;
    if (s[0] == 'f') *n = v < total ? (uint32_t)v : total;
    if (s[0] == 'f') memcpy(*out, gpus, (size_t)*n * sizeof **out);
    else *n = select_label(t, s[0], (long)v, *out);
  } else if (parse_list(cmd, t, s, *out, n)) {
    return -1;
  }
  if (*n == 0) {
    cli_usage_error(cmd, "--gpus %s selects no GPU", s);
    return -1;
  }
  return 0;
}

/* The --bounded names of run, sweep and plan, listed in this order by the
 * usage message: a new shortcut is one line here, plus its name in
 * shortcuts_help below (sweep's and plan's --help; run has its own). */
static const struct { const char *name; unsigned bits; } names[] = {
    {"batch", TS_STEP_BATCH}, {"compact", TS_STEP_COMPACT_SMALL},
    {"beside", TS_STEP_BESIDE}, {"steady", TS_STEP_STEADY},
    {"cross", TS_STEP_CROSS}, {"all", TS_STEP_BOUNDED_ALL}, {"none", 0}};
enum { NNAMES = sizeof names / sizeof *names };

static int bounded_error(const char *cmd, const char *arg) {
  char list[256];
  size_t len = 0;
  for (size_t k = 0; k < NNAMES && len < sizeof list; k++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                            k ? (k + 1 == NNAMES ? " or " : ", ") : "",
                            names[k].name);
  return cli_usage_error(cmd, "--bounded takes %s, comma-separated: '%s'",
                         list, arg);
}

int cli_parse_bounded(const char *cmd, const char *arg, unsigned *out) {
  if (!arg) {
    *out = TS_STEP_BOUNDED_ALL;
    return 0;
  }
  unsigned bits = 0;
  for (const char *p = arg;;) {
    size_t n = strcspn(p, ",");
    size_t k = 0;
    while (k < NNAMES &&
           (strlen(names[k].name) != n || strncmp(names[k].name, p, n)))
      k++;
    if (k == NNAMES) return bounded_error(cmd, arg);
    bits |= names[k].bits;
    if (!p[n]) break;
    p += n + 1;
  }
  *out = bits;
  return 0;
}

/* Option, then its description's lines; "" between options. */
static const char *const shortcuts_help[] = {
    "--exact", "no shortcuts: every step the full simulation",
    "(slower), as `topsim run --exact`", "",
    "--bounded[=LIST]", "the step's bounded shortcuts (not exact; each",
    "within its stated error of --exact, docs/model.md",
    "\"Bounded shortcuts\"), as `topsim run --bounded`:",
    "LIST is batch, compact, beside, steady, cross,",
    "all or none, comma-separated (none: only the",
    "exact shortcuts, the same steps as --exact).",
    "Without LIST: all. Default: batch,cross", ""};

void cli_step_shortcuts_help(int col) {
  enum { OPTION, FIRST, MORE } at = OPTION; /* what the next line is */
  for (size_t i = 0; i < sizeof shortcuts_help / sizeof *shortcuts_help; i++) {
    const char *l = shortcuts_help[i];
    if (!*l) at = OPTION;
    else if (at == OPTION) printf("  %-*s", col - 2, l), at = FIRST;
    else if (at == FIRST) printf("%s\n", l), at = MORE;
    else printf("%*s%s\n", col, "", l);
  }
}
