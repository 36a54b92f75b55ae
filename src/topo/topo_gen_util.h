/* topo_gen_util.h - private helpers the fabric generators share (not part of
 * the topo_gen.h API): plane-positioned diagnostics, endpoint collection,
 * switch prototypes and cable bundles. */
#ifndef TOPSIM_TOPO_GEN_UTIL_H
#define TOPSIM_TOPO_GEN_UTIL_H

#include <stdint.h>

#include "topo/topo_graph.h"

/* Sets d to a message positioned at the plane's generator (t->plane_marks)
 * in t->source; returns code. */
int topo_gen_fail(const ts_topo *t, uint16_t plane, ts_diag *d, int code,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Gives a position-less diagnostic (from topo_clos_size) the plane's
 * position; returns rc unchanged. */
int topo_gen_place(const ts_topo *t, uint16_t plane, ts_diag *d, int rc);

/* Returns TS_ESCHEMA (d set) unless plane names an existing plane. */
int topo_gen_check_plane(const ts_topo *t, uint16_t plane, ts_diag *d);

/* Ids of nodes of kind on plane (TS_NO_PLANE: any plane), in id order.
 * Returns a malloc'd array the caller frees (never NULL-with-count-0 on
 * success: an empty result is a 1-element allocation), or NULL on ENOMEM. */
uint32_t *topo_gen_collect(ts_topo *t, ts_node_kind kind, uint16_t plane,
                           uint32_t *count);

/* A switch prototype: kind, tier, plane and radix set, other labels TS_NONE. */
ts_node topo_gen_switch(ts_node_kind kind, ts_tier tier, uint16_t plane,
                        uint32_t radix);

/* Adds a bundle of width cables of cable_bw each (bandwidth width*cable_bw). */
void topo_gen_bundle(ts_topo *t, uint32_t a, uint32_t b, ts_link_kind kind,
                     uint32_t width, double cable_bw, ts_time_ps latency,
                     uint16_t plane);

/* Speed of the NIC-to-switch cable: the NIC's port speed, else fallback. */
double topo_gen_nic_bw(const ts_topo *t, uint32_t nic, double fallback);

/* TS_ENOMEM with d set if an append failed since t was created, else 0. */
int topo_gen_oom(const ts_topo *t, uint16_t plane, ts_diag *d);

#endif
