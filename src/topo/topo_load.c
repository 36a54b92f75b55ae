/* topo_load.c - placeholder until the schema loader lands (same session). */
#include "topo/topo_graph.h"

int ts_topo_load_buffer(const char *buf, size_t len, const char *name,
                        ts_topo **out, ts_diag *d) {
  (void)buf;
  (void)len;
  *out = NULL;
  return ts_diag_set(d, TS_EINTERNAL, name, 0, 0, "loader not built yet");
}

int ts_topo_load_file(const char *path, ts_topo **out, ts_diag *d) {
  return ts_topo_load_buffer(NULL, 0, path, out, d);
}
