/* bench_topo_maxima.c - loads topologies at the documented maxima of the
 * dimensions that used to make loading super-linear (issue 14): GPU models,
 * planes, templates and node groups (65,534 each at most), every name 96
 * bytes long (the longest allowed). Templates name the last GPU model and a
 * plane each; groups name templates from the other end. The YAML reader's
 * 1,000,000-node limit keeps all four from being at their maximum in one
 * file, so the default run loads five files: each dimension at 65,534 with
 * the others at 1, then all four at 20,000 together (with one NIC per host
 * on its own plane). Before the fix: duplicate-plane check O(P^2), template
 * and model lookups O(T x G), the name index rebuilt per plane, a node scan
 * per plane. Target: each under 2 s for load + validate
 * (docs/performance.md).
 *
 * usage: bench_topo_maxima [P M T G NICS]   (one file; NICS 0 or 1)
 *        bench_topo_maxima --write FILE P M T G NICS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "topsim/ts_topo_check.h"

#define NAME 96

/* A NAME-byte name: prefix, index, padded with 'x'. */
static void name(char *buf, char prefix, unsigned i) {
  int n = snprintf(buf, NAME + 1, "%c%u-", prefix, i);
  memset(buf + n, 'x', (size_t)(NAME - n));
  buf[NAME] = '\0';
}

typedef struct dims {
  unsigned planes, models, templates, groups, nics;
} dims;

static char *generate(const dims *n, size_t *len) {
  size_t cap = ((size_t)n->planes + n->models + 3 * (size_t)n->templates +
                n->groups) * 400 + 4096, off = 0;
  char *y = malloc(cap), a[NAME + 1], b[NAME + 1], c[NAME + 1];
  if (!y) return NULL;
#define OUT(...) off += (size_t)snprintf(y + off, cap - off, __VA_ARGS__)
  OUT("topsim: 1\nname: maxima\ngpu_models:\n");
  for (unsigned i = 0; i < n->models; i++) {
    name(a, 'm', i);
    OUT("  %s: {bf16: 1TFLOP/s, hbm: 1GB, hbm_bandwidth: 1GB/s}\n", a);
  }
  OUT("planes:\n");
  for (unsigned i = 0; i < n->planes; i++) {
    name(a, 'p', i);
    OUT("  - {name: %s, kind: backend, technology: ib_ndr}\n", a);
  }
  OUT("templates:\n");
  name(b, 'm', n->models - 1);
  for (unsigned i = 0; i < n->templates; i++) {
    name(a, 't', i);
    name(c, 'p', i % n->planes);
    if (n->nics)
      OUT("  %s: {gpu_model: %s, gpus: {count: 1}, nics: [{plane: %s, count: 1}]}\n",
          a, b, c);
    else
      OUT("  %s: {gpu_model: %s, gpus: {count: 1}}\n", a, b);
  }
  OUT("nodes:\n");
  for (unsigned i = 0; i < n->groups; i++) {
    name(a, 'h', i);
    name(b, 't', (n->groups - 1 - i) % n->templates);
    OUT("  - {name: %s, template: %s, count: 1}\n", a, b);
  }
#undef OUT
  *len = off;
  return y;
}

/* CPU seconds (user + system) used so far: on a shared machine the wall
 * clock also counts the other processes' time slices. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* Loads and validates one file; prints one line; 0 or 1. */
static int run(const dims *n, const char *write) {
  size_t len;
  char *yaml = generate(n, &len);
  if (!yaml) return 1;
  if (write) {
    FILE *f = fopen(write, "w");
    int bad = !f || fwrite(yaml, 1, len, f) != len;
    if (f && fclose(f)) bad = 1;
    free(yaml);
    return bad;
  }
  ts_diag d;
  ts_diag_clear(&d);
  ts_topo *t = NULL;
  double c0 = cpu_s(), t0 = bench_now_s();
  int rc = ts_topo_load_buffer(yaml, len, "<maxima>", &t, &d);
  double t1 = bench_now_s();
  free(yaml);
  if (rc) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
  }
  ts_problems p = {0};
  int problems = ts_topo_validate(t, &p);
  double t2 = bench_now_s(), c2 = cpu_s();
  printf("planes %5u models %5u templates %5u groups %5u nics %u: %5.1f MB, "
         "%6u devices, %d problems; load %.3f s validate %.3f s total %.3f s "
         "(CPU %.3f s)\n",
         n->planes, n->models, n->templates, n->groups, n->nics,
         (double)len / 1e6, ts_topo_node_count(t), problems, t1 - t0, t2 - t1,
         t2 - t0, c2 - c0);
  ts_problems_free(&p);
  ts_topo_free(t);
  return 0;
}

int main(int argc, char **argv) {
  const char *write = NULL;
  int k = 1;
  if (argc > 2 && !strcmp(argv[1], "--write")) write = argv[2], k = 3;
  if (argc - k == 5) {
    dims n = {(unsigned)atoi(argv[k]), (unsigned)atoi(argv[k + 1]),
              (unsigned)atoi(argv[k + 2]), (unsigned)atoi(argv[k + 3]),
              (unsigned)atoi(argv[k + 4])};
    if (!n.planes || !n.models || !n.templates || !n.groups) return 2;
    return run(&n, write);
  }
  if (argc != 1) {
    fprintf(stderr, "usage: bench_topo_maxima [[--write FILE] P M T G NICS]\n");
    return 2;
  }
  static const dims sets[] = {{65534, 1, 1, 1, 0}, {1, 65534, 1, 1, 0},
                              {1, 1, 65534, 1, 0}, {1, 1, 1, 65534, 0},
                              {20000, 20000, 20000, 20000, 1}};
  int rc = 0;
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) rc |= run(&sets[i], NULL);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
  return rc;
}
