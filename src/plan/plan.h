/* plan.h - private interface between the planner's files.
 *
 *   plan_templates.c  node templates: built-ins and FILE:NAME, reduced to
 *                     the figures the rules need plus YAML text to emit
 *   plan_size.c       request -> topo_clos_size input, tier choice, presets
 *   plan_bom.c        ports, cables, transceivers, bisection, hops, failures
 *   plan_emit.c       the plan as a topology file
 * A plan_tmpl owns three malloc'd strings; plan_tmpl_free releases them. */
#ifndef TOPSIM_PLAN_H
#define TOPSIM_PLAN_H

#include "topo/topo_gen.h"
#include "topsim/ts_plan.h"

typedef struct plan_tmpl {
  char name[64];
  char model[64];        /* GPU model name */
  char plane[64];        /* the template's one backend plane */
  char technology[32];   /* that plane's network preset, or "" */
  double speed;          /* nominal bytes/s of one compute NIC */
  double efficiency;     /* plane efficiency (preset or explicit), else 1 */
  uint32_t gpus, rails;  /* per node */
  double power;          /* W per node from the template's `power`, 0 none */
  char *model_yaml;      /* flow mapping of the GPU model */
  char *plane_yaml;      /* flow mapping of the plane, minus any fabric */
  char *tmpl_yaml;       /* flow mapping of the template, backend NICs only */
} plan_tmpl;

/* Loads template spec (built-in name or FILE:NAME). rails/speed nonzero
 * override the template's compute NIC count and speed in tmpl_yaml. Returns
 * 0, TS_EUSAGE (unknown name, no GPUs, no or several backend planes, rails
 * override impossible), or the YAML reader's error; frees nothing on error
 * that the caller must free. */
int plan_tmpl_load(const char *spec, uint32_t rails, double speed,
                   plan_tmpl *out, ts_diag *d);
void plan_tmpl_free(plan_tmpl *t);

/* Sizing input for `tiers` tiers (plan_size.c). */
void plan_clos_in(const ts_plan_request *req, const ts_plan_result *r,
                  uint32_t tiers, topo_clos_in *in);

/* Fills ports, cables, transceivers, bisection, hops and failures of r from
 * shape s (plan_bom.c). */
void plan_bom(const ts_plan_request *req, const topo_clos_shape *s,
              ts_plan_result *r);

/* Racks, rows, cable lengths, media, power and cost of r (plan_layout.c),
 * storage and frontend planes included. Returns 0, or TS_EUSAGE /
 * TS_ESCHEMA / TS_ENOINPUT (catalog) with d set. */
int plan_layout(const ts_plan_request *req, const plan_tmpl *t,
                ts_plan_result *r, ts_diag *d);

/* Sizes the storage and frontend planes of r (plan_planes.c). Returns 0
 * or TS_EUSAGE with d set. */
int plan_planes(const ts_plan_request *req, ts_plan_result *r, ts_diag *d);

/* Appends a note (dropped past the fourth). */
void plan_note(ts_plan_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
