/* report_plan_diagram.c - the tier-level picture of a plan, as DOT or as
 * SVG laid out here (no Graphviz), readable at any size.
 *
 * Tier groups (one box each, one row per tier):
 *   nodes  one box: all nodes (SUs, GPUs);
 *   leaf   one box per rail (the SUs' leaves of that rail), or one box
 *          when there are more than 16 rails;
 *   spine  two tiers: one box (the one spine group); three tiers: one box
 *          per rail (the pods' spine groups of that rail), or one box past
 *          16 rails;
 *   core   one box per core group, or one box past 16 groups.
 * Edges carry cable counts: nodes -> each leaf box (nodes cables, one per
 * node), leaf box -> its spine box, spine box -> every core box (rule 7:
 * every core group sees every rail). Between rows with more than 16 edges
 * the per-edge count goes into the row caption instead of each edge.
 * Size: O(leaf boxes + spine boxes x core boxes). */
#include <stdio.h>
#include <string.h>

#include "topsim/ts_report_plan.h"

#define MAX_BOXES 16u
#define BOX_W 150
#define BOX_H 44
#define GAP 20
#define ROW_H 120

typedef struct groups {
  uint32_t n[4];          /* boxes per row: nodes, leaf, spine, core */
  uint64_t edge[3];       /* cables per edge between row i and i+1 */
  uint32_t per_box[4];    /* switches (or nodes) per box */
} groups;

static void make_groups(const ts_plan_result *r, groups *g) {
  memset(g, 0, sizeof *g);
  uint32_t rails = r->rails;
  g->n[0] = 1;
  g->per_box[0] = r->nodes;
  g->n[1] = rails <= MAX_BOXES ? rails : 1;
  g->per_box[1] = r->tier[0].switches / g->n[1];
  g->edge[0] = (uint64_t)r->cables[0] / g->n[1];
  if (r->tiers >= 2) {
    g->n[2] = r->tiers == 2 ? 1 : g->n[1];
    g->per_box[2] = r->tier[1].switches / g->n[2];
    g->edge[1] = r->cables[1] / g->n[1];
  }
  if (r->tiers >= 3) {
    g->n[3] = r->core_groups <= MAX_BOXES ? r->core_groups : 1;
    g->per_box[3] = r->tier[2].switches / g->n[3];
    g->edge[2] = r->cables[2] / ((uint64_t)g->n[2] * g->n[3]);
  }
}

static void box_label(const ts_plan_result *r, int row, uint32_t i,
                      const groups *g, char *b, size_t n) {
  static const char *const tiers[4] = {"nodes", "leaves", "spines", "cores"};
  if (row == 0)
    snprintf(b, n, "%u x %s|%u GPUs, %u SUs", r->nodes, r->template_name,
             r->gpus, r->sus);
  else if (row == 3 && g->n[3] > 1)
    snprintf(b, n, "core group %u|%u cores", i, g->per_box[3]);
  else if ((row == 1 || (row == 2 && r->tiers == 3)) && g->n[row] > 1)
    snprintf(b, n, "rail %u %s|%u switches", i, tiers[row], g->per_box[row]);
  else
    snprintf(b, n, "%s|%u switches", tiers[row], g->per_box[row]);
}

/* Box of row `row` that box i of row-1 connects to, or -1 for all. */
static int target(const groups *g, int row, uint32_t i) {
  if (row == 1 || row == 3) return -1;
  return g->n[2] == 1 ? 0 : (int)i;
}

/* ---- DOT ---- */

static void dot_label(const char *l, FILE *f) {
  for (; *l; l++) {
    if (*l == '|') fputs("\\n", f);
    else if (*l == '"') fputs("\\\"", f);
    else fputc(*l, f);
  }
}

static int diagram_dot(const ts_plan_result *r, const groups *g, FILE *f) {
  fprintf(f, "graph tiers {\n  rankdir=BT;\n  node [shape=box];\n");
  for (int row = 0; row < 4; row++) {
    if (!g->n[row]) continue;
    fprintf(f, "  { rank=same;");
    for (uint32_t i = 0; i < g->n[row]; i++) {
      char b[128];
      box_label(r, row, i, g, b, sizeof b);
      fprintf(f, " t%d_%u [label=\"", row, i);
      dot_label(b, f);
      fprintf(f, "\"];");
    }
    fprintf(f, " }\n");
  }
  for (int row = 1; row < 4; row++) {
    if (!g->n[row]) continue;
    for (uint32_t i = 0; i < g->n[row - 1]; i++) {
      int t = target(g, row, i);
      for (uint32_t j = 0; j < g->n[row]; j++)
        if (t < 0 || (uint32_t)t == j)
          fprintf(f, "  t%d_%u -- t%d_%u [label=\"%llu\"];\n", row - 1, i,
                  row, j, (unsigned long long)g->edge[row - 1]);
    }
  }
  fprintf(f, "}\n");
  return ferror(f) ? TS_EIO : 0;
}

/* ---- SVG ---- */

static void svg_text(FILE *f, double x, double y, const char *s, int len) {
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y);
  for (int k = 0; k < len && s[k]; k++) {
    if (s[k] == '<') fputs("&lt;", f);
    else if (s[k] == '>') fputs("&gt;", f);
    else if (s[k] == '&') fputs("&amp;", f);
    else fputc(s[k], f);
  }
  fputs("</text>\n", f);
}

static double box_x(uint32_t i, uint32_t n, double width) {
  double row_w = n * BOX_W + (n ? n - 1 : 0) * GAP;
  return (width - row_w) / 2 + i * (BOX_W + GAP);
}

static double row_y(int row, int rows) { return 40 + (rows - 1 - row) * ROW_H; }

static void svg_edges(const groups *g, int rows, double width, FILE *f) {
  for (int row = 1; row < rows; row++) {
    uint64_t edges = 0;
    for (uint32_t i = 0; i < g->n[row - 1]; i++)
      edges += target(g, row, i) < 0 ? g->n[row] : 1;
    for (uint32_t i = 0; i < g->n[row - 1]; i++) {
      int t = target(g, row, i);
      for (uint32_t j = 0; j < g->n[row]; j++) {
        if (t >= 0 && (uint32_t)t != j) continue;
        double x1 = box_x(i, g->n[row - 1], width) + BOX_W / 2.0;
        double y1 = row_y(row - 1, rows);
        double x2 = box_x(j, g->n[row], width) + BOX_W / 2.0;
        double y2 = row_y(row, rows) + BOX_H;
        fprintf(f, "<line class=\"edge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                "y2=\"%.1f\"/>\n", x1, y1, x2, y2);
        if (edges > MAX_BOXES) continue;
        char b[32];
        snprintf(b, sizeof b, "%llu", (unsigned long long)g->edge[row - 1]);
        svg_text(f, (x1 + x2) / 2 + 4, (y1 + y2) / 2, b, 31);
      }
    }
    if (edges > MAX_BOXES) {
      char b[96];
      snprintf(b, sizeof b, "each line: %llu cables",
               (unsigned long long)g->edge[row - 1]);
      svg_text(f, width - 110, (row_y(row - 1, rows) + row_y(row, rows) +
                                BOX_H) / 2, b, 95);
    }
  }
}

static int diagram_svg(const ts_plan_result *r, const groups *g, FILE *f) {
  int rows = 1 + (int)(r->tiers);
  uint32_t widest = 1;
  for (int row = 0; row < rows; row++)
    if (g->n[row] > widest) widest = g->n[row];
  double width = widest * (BOX_W + GAP) + 240, height = rows * ROW_H + 20;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
          "www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 "
          "%.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n<style>"
          ".group{fill:#eef3fb;stroke:#35567d} .edge{stroke:#8a8a8a}"
          "</style>\n", width, height, width, height);
  svg_edges(g, rows, width, f);
  for (int row = 0; row < rows; row++)
    for (uint32_t i = 0; i < g->n[row]; i++) {
      double x = box_x(i, g->n[row], width), y = row_y(row, rows);
      char b[128];
      box_label(r, row, i, g, b, sizeof b);
      fprintf(f, "<rect class=\"group\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
              "height=\"%d\" rx=\"4\"/>\n", x, y, BOX_W, BOX_H);
      const char *bar = strchr(b, '|');
      int first = bar ? (int)(bar - b) : (int)strlen(b);
      svg_text(f, x + BOX_W / 2.0, y + 18, b, first);
      if (bar) svg_text(f, x + BOX_W / 2.0, y + 34, bar + 1, 127);
    }
  fprintf(f, "</svg>\n");
  return ferror(f) ? TS_EIO : 0;
}

int ts_report_plan_diagram(const ts_plan_result *r, int svg, FILE *out) {
  groups g;
  make_groups(r, &g);
  return svg ? diagram_svg(r, &g, out) : diagram_dot(r, &g, out);
}
