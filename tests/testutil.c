#include "testutil.h"

#include <stdio.h>
#include <string.h>

const char *tu_path(const char *rel) {
  static char bufs[4][1024];
  static int next;
  char *b = bufs[next++ & 3];
  snprintf(b, sizeof bufs[0], "%s/%s", TOPSIM_SOURCE_DIR, rel);
  return b;
}

ts_topo *tu_load(const char *rel) {
  ts_topo *t = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_topo_load_file(tu_path(rel), &t, &d);
  if (rc) {
    char msg[1200];
    ts_diag_format(&d, msg, sizeof msg);
    print_error("%s\n", msg);
  }
  assert_int_equal(rc, 0);
  assert_non_null(t);
  return t;
}

int tu_load_text(const char *yaml, ts_topo **out, ts_diag *d) {
  ts_diag_clear(d);
  return ts_topo_load_buffer(yaml, strlen(yaml), "<test>", out, d);
}

uint32_t tu_count(const ts_topo *t, ts_node_kind kind, int tier) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < ts_topo_node_count(t); i++) {
    const ts_node *nd = ts_topo_node(t, i);
    if (nd->kind == kind && (tier < 0 || nd->tier == tier)) n++;
  }
  return n;
}

void tu_set(ts_workload *w, const char *k, const char *v) {
  ts_diag d;
  ts_diag_clear(&d);
  int rc = ts_workload_override(w, k, v, &d);
  if (rc) print_error("%s\n", d.msg);
  assert_int_equal(rc, 0);
}
