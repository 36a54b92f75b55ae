/* plan_emit.c - a plan as a topology file (ts_plan_emit_yaml).
 *
 * Output (format v1, see src/topo/topo_load.c):
 *   gpu_models:  the template's GPU model
 *   planes:      the template's backend plane, its fabric replaced by a
 *                rail_optimized generator with the plan's tiers, radix and
 *                splits; bandwidth = the plan's port speed
 *   templates:   the template with its backend NIC groups only
 *   nodes:       one group of r->nodes with per_su = the plan's SU size
 *                and per_rack = the layout's nodes per rack (when > 1)
 * The generator then calls the same sizing rules with the same input, so
 * the loaded fabric has the plan's switch counts. Cost: O(template text). */
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"

/* A name as a double-quoted YAML scalar. */
static void quoted(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void emit_spec(FILE *f, const char *key, const ts_plan_tier *t,
                      int split) {
  if (split)
    fprintf(f, ", %s: {radix: %u, down: %u, up: %u}", key, t->radix, t->down,
            t->up);
  else
    fprintf(f, ", %s: {radix: %u}", key, t->radix);
}

static void emit_plane(FILE *f, const ts_plan_result *r, const plan_tmpl *t) {
  size_t n = 0;
  while (t->plane_yaml[n]) n++;
  /* InfiniBand forwards by destination (D-mod-k), as the bundled IB
   * topologies declare; a planned fabric must route like them unless the
   * template's plane already says how it routes */
  const char *routing = strncmp(r->technology, "ib_", 3) == 0 &&
                                !strstr(t->plane_yaml, "routing:")
                            ? "routing: dmodk, "
                            : "";
  /* plane_yaml is a flow mapping: reopen it before its closing brace */
  fprintf(f, "planes:\n  - %.*s%s%sbandwidth: %.6gGb/s, generator: {type: "
          "rail_optimized, tiers: %u", (int)(n - 1), t->plane_yaml,
          n > 2 ? ", " : "", routing, r->port_speed * 8 / 1e9, r->tiers);
  emit_spec(f, "leaf", &r->tier[TS_PLAN_LEAF], r->tiers > 1);
  if (r->tiers > 1)
    emit_spec(f, "spine", &r->tier[TS_PLAN_SPINE], r->tiers > 2);
  if (r->tiers > 2) emit_spec(f, "core", &r->tier[TS_PLAN_CORE], 0);
  fprintf(f, "}}\n");
}

int ts_plan_emit_yaml(const ts_plan_result *r, FILE *f) {
  const plan_tmpl *t = r->priv;
  if (!t) return TS_EIO;
  fprintf(f, "# Written by `topsim plan`: %u x %s (%u GPUs), %u SU(s) of %u "
          "nodes, %u tier%s,\n# %u leaves, %u spines, %u cores. Compute "
          "fabric only: the template keeps its\n# backend NICs; the storage "
          "and frontend planes are in the plan's BOM, not here.\n",
          r->nodes, r->template_name, r->gpus, r->sus, r->nodes_per_su,
          r->tiers, r->tiers > 1 ? "s" : "", r->tier[0].switches,
          r->tier[1].switches, r->tier[2].switches);
  char name[96];
  snprintf(name, sizeof name, "plan-%s-%un", r->template_name, r->nodes);
  fprintf(f, "topsim: 1\nname: ");
  quoted(f, name);
  fprintf(f, "\ndescription: ");
  quoted(f, "capacity plan from topsim plan");
  fprintf(f, "\n\ngpu_models:\n  ");
  quoted(f, t->model);
  fprintf(f, ": %s\n\n", t->model_yaml);
  emit_plane(f, r, t);
  fprintf(f, "\ntemplates:\n  ");
  quoted(f, t->name);
  fprintf(f, ": %s\n\nnodes:\n  - {name: node, template: ", t->tmpl_yaml);
  quoted(f, t->name);
  fprintf(f, ", count: %u, per_su: %u", r->nodes, r->nodes_per_su);
  if (r->layout.nodes_per_rack > 1)
    fprintf(f, ", per_rack: %u", r->layout.nodes_per_rack);
  fprintf(f, "}\n");
  return ferror(f) ? TS_EIO : 0;
}
