/* report_tiers.c - writers of tier-level diagrams (report_tiers.h).
 *
 * Layout of the SVG: one horizontal row per tier, the endpoints at the
 * bottom; boxes of a row centred and evenly spaced; straight lines between
 * connected boxes. An edge label sits on its line when the two rows have at
 * most 16 edges between them; denser rows get one caption instead ("each
 * line: N cables", or the range when counts differ). Both writers are
 * O(boxes + edges); the builders keep boxes per row at most 16 groups, so
 * the picture stays readable at any cluster size. */
#include "report/report_tiers.h"

#include <stdlib.h>
#include <string.h>

#include "topsim/ts_error.h"

#define BOX_W 160
#define BOX_H 44
#define GAP 20
#define ROW_H 130
#define MARGIN 40
#define CAPTION_W 220

uint32_t td_add_box(tdiag *d, int row, const char *l1, const char *l2) {
  if (d->oom) return 0;
  if (d->nbox == d->capbox) {
    uint32_t cap = d->capbox ? d->capbox * 2 : 32;
    td_box *b = realloc(d->box, cap * sizeof *b);
    if (!b) { d->oom = 1; return 0; }
    d->box = b;
    d->capbox = cap;
  }
  td_box *b = &d->box[d->nbox];
  b->row = row;
  snprintf(b->l1, sizeof b->l1, "%s", l1);
  snprintf(b->l2, sizeof b->l2, "%s", l2 ? l2 : "");
  return d->nbox++;
}

void td_add_edge(tdiag *d, uint32_t a, uint32_t b, uint64_t cables) {
  if (d->oom) return;
  if (d->nedge == d->capedge) {
    uint32_t cap = d->capedge ? d->capedge * 2 : 64;
    td_edge *e = realloc(d->edge, cap * sizeof *e);
    if (!e) { d->oom = 1; return; }
    d->edge = e;
    d->capedge = cap;
  }
  d->edge[d->nedge++] = (td_edge){a, b, cables};
}

void td_free(tdiag *d) {
  free(d->box);
  free(d->edge);
  memset(d, 0, sizeof *d);
}

/* ---- DOT ---- */

static void dot_str(const char *s, FILE *f) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
}

static int write_dot(const tdiag *d, FILE *f) {
  fprintf(f, "graph tiers {\n  rankdir=BT;\n  node [shape=box];\n");
  for (int row = 0; row < TD_ROWS; row++) {
    int any = 0;
    for (uint32_t i = 0; i < d->nbox; i++) {
      if (d->box[i].row != row) continue;
      if (!any) fprintf(f, "  { rank=same;");
      any = 1;
      fprintf(f, " b%u [label=\"", i);
      dot_str(d->box[i].l1, f);
      if (d->box[i].l2[0]) fputs("\\n", f), dot_str(d->box[i].l2, f);
      fprintf(f, "\"];");
    }
    if (any) fprintf(f, " }\n");
  }
  for (uint32_t i = 0; i < d->nedge; i++)
    fprintf(f, "  b%u -- b%u [label=\"%llu\"];\n", d->edge[i].a, d->edge[i].b,
            (unsigned long long)d->edge[i].cables);
  fprintf(f, "}\n");
  return ferror(f) ? TS_EIO : 0;
}

/* ---- SVG ---- */

typedef struct place {
  double *x;                   /* left edge of each box */
  int rows;                    /* highest row used + 1 */
  double width, height;
} place;

static double row_y(const place *p, int row) {
  return MARGIN + (p->rows - 1 - row) * ROW_H;
}

static int layout(const tdiag *d, place *p) {
  uint32_t per_row[TD_ROWS] = {0}, seen[TD_ROWS] = {0}, widest = 1;
  p->rows = 1;
  for (uint32_t i = 0; i < d->nbox; i++) {
    per_row[d->box[i].row]++;
    if (d->box[i].row + 1 > p->rows) p->rows = d->box[i].row + 1;
  }
  for (int r = 0; r < TD_ROWS; r++)
    if (per_row[r] > widest) widest = per_row[r];
  p->width = widest * (BOX_W + GAP) + 2 * MARGIN + CAPTION_W;
  p->height = p->rows * ROW_H + MARGIN;
  p->x = calloc(d->nbox ? d->nbox : 1, sizeof *p->x);
  if (!p->x) return TS_ENOMEM;
  double inner = p->width - CAPTION_W;
  for (uint32_t i = 0; i < d->nbox; i++) {
    int r = d->box[i].row;
    double row_w = per_row[r] * BOX_W + (per_row[r] - 1) * GAP;
    p->x[i] = (inner - row_w) / 2 + seen[r]++ * (BOX_W + GAP);
  }
  return 0;
}

static void svg_text(FILE *f, double x, double y, const char *anchor,
                     const char *s) {
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else fputc(*s, f);
  }
  fputs("</text>\n", f);
}

/* Edges whose lower box is in `row`: count and the range of cable counts. */
static uint32_t row_edges(const tdiag *d, int row, uint64_t *lo, uint64_t *hi) {
  uint32_t n = 0;
  *lo = UINT64_MAX, *hi = 0;
  for (uint32_t i = 0; i < d->nedge; i++) {
    if (d->box[d->edge[i].a].row != row) continue;
    n++;
    if (d->edge[i].cables < *lo) *lo = d->edge[i].cables;
    if (d->edge[i].cables > *hi) *hi = d->edge[i].cables;
  }
  return n;
}

static void svg_edges(const tdiag *d, const place *p, FILE *f) {
  for (int row = 0; row + 1 < p->rows; row++) {
    uint64_t lo, hi;
    uint32_t n = row_edges(d, row, &lo, &hi);
    for (uint32_t i = 0; i < d->nedge; i++) {
      const td_edge *e = &d->edge[i];
      if (d->box[e->a].row != row) continue;
      double x1 = p->x[e->a] + BOX_W / 2.0, y1 = row_y(p, d->box[e->a].row);
      double x2 = p->x[e->b] + BOX_W / 2.0;
      double y2 = row_y(p, d->box[e->b].row) + BOX_H;
      fprintf(f, "<line class=\"edge\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
              "y2=\"%.1f\"/>\n", x1, y1, x2, y2);
      if (n > TD_GROUPS_MAX) continue;
      char b[32];
      snprintf(b, sizeof b, "%llu", (unsigned long long)e->cables);
      svg_text(f, (x1 + x2) / 2 + 4, (y1 + y2) / 2, "start", b);
    }
    if (n <= TD_GROUPS_MAX) continue;
    char b[96];
    if (lo == hi) snprintf(b, sizeof b, "each line: %llu cables",
                           (unsigned long long)lo);
    else snprintf(b, sizeof b, "lines: %llu to %llu cables",
                  (unsigned long long)lo, (unsigned long long)hi);
    svg_text(f, p->width - CAPTION_W + 10,
             row_y(p, row) - (ROW_H - BOX_H) / 2.0, "start", b);
  }
}

static int write_svg(const tdiag *d, FILE *f) {
  place p;
  if (layout(d, &p)) return TS_ENOMEM;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
          "www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 "
          "%.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n<style>"
          ".group{fill:#eef3fb;stroke:#35567d} .edge{stroke:#8a8a8a}"
          "</style>\n", p.width, p.height, p.width, p.height);
  svg_edges(d, &p, f);
  for (uint32_t i = 0; i < d->nbox; i++) {
    double x = p.x[i], y = row_y(&p, d->box[i].row);
    fprintf(f, "<rect class=\"group\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
            "height=\"%d\" rx=\"4\"/>\n", x, y, BOX_W, BOX_H);
    svg_text(f, x + BOX_W / 2.0, y + 18, "middle", d->box[i].l1);
    svg_text(f, x + BOX_W / 2.0, y + 34, "middle", d->box[i].l2);
  }
  fprintf(f, "</svg>\n");
  free(p.x);
  return ferror(f) ? TS_EIO : 0;
}

int td_write(const tdiag *d, int svg, FILE *out) {
  if (d->oom) return TS_ENOMEM;
  return svg ? write_svg(d, out) : write_dot(d, out);
}
