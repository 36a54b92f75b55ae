/* topo_gen_util.c - helpers shared by the fabric generators.
 *
 * Everything here is O(1) except topo_gen_collect: a plane's NICs come
 * from a grouping by plane built once (O(nodes + planes) for all planes
 * together), other kinds from one O(nodes) scan; so many generated planes
 * cost O(nodes + links + planes), not O(nodes x planes). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "topo/topo_gen_util.h"

int topo_gen_fail(const ts_topo *t, uint16_t plane, ts_diag *d, int code,
                  const char *fmt, ...) {
  if (!d) return code;
  char msg[sizeof d->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  topo_mark m = {0, 0};
  if (plane < t->plane_count) m = t->plane_marks[plane];
  return ts_diag_set(d, code, t->source, (int)m.line, (int)m.col, "%s", msg);
}

int topo_gen_place(const ts_topo *t, uint16_t plane, ts_diag *d, int rc) {
  if (!rc || !d) return rc;
  char msg[sizeof d->msg];
  snprintf(msg, sizeof msg, "%s", d->msg);
  const char *pname = plane < t->plane_count ? t->planes[plane].name : "?";
  return topo_gen_fail(t, plane, d, rc, "plane '%s': %s", pname, msg);
}

int topo_gen_check_plane(const ts_topo *t, uint16_t plane, ts_diag *d) {
  if (plane < t->plane_count) return 0;
  return ts_diag_set(d, TS_ESCHEMA, t->source, 0, 0,
                     "generator given plane %u but the topology has %u planes",
                     (unsigned)plane, (unsigned)t->plane_count);
}

uint32_t *topo_gen_collect(ts_topo *t, ts_node_kind kind, uint16_t plane,
                           uint32_t *count) {
  if (kind == TS_NODE_NIC && plane != TS_NO_PLANE) /* per plane: O(plane) */
    return topo_plane_nics(t, plane, count);
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->node_count; i++)
    n += t->nodes[i].kind == kind &&
         (plane == TS_NO_PLANE || t->nodes[i].plane == plane);
  uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
  *count = 0;
  if (!ids) return NULL;
  for (uint32_t i = 0; i < t->node_count; i++)
    if (t->nodes[i].kind == kind &&
        (plane == TS_NO_PLANE || t->nodes[i].plane == plane))
      ids[(*count)++] = i;
  return ids;
}

ts_node topo_gen_switch(ts_node_kind kind, ts_tier tier, uint16_t plane,
                        uint32_t radix) {
  ts_node n = topo_node_proto(kind);
  n.tier = (uint8_t)tier;
  n.plane = plane;
  n.radix = radix;
  return n;
}

void topo_gen_bundle(ts_topo *t, uint32_t a, uint32_t b, ts_link_kind kind,
                     uint32_t width, double cable_bw, ts_time_ps latency,
                     uint16_t plane) {
  /* Callers bound width by a switch radix, itself capped at UINT16_MAX. */
  topo_add_link(t, a, b, kind, (uint16_t)width, width * cable_bw, latency,
                plane);
}

double topo_gen_nic_bw(const ts_topo *t, uint32_t nic, double fallback) {
  double bw = t->port_bw[nic];
  return bw > 0.0 ? bw : fallback;
}

int topo_gen_oom(const ts_topo *t, uint16_t plane, ts_diag *d) {
  if (!t->oom) return 0;
  return topo_gen_fail(t, plane, d, TS_ENOMEM,
                       "out of memory while generating plane '%s'",
                       t->planes[plane].name);
}
