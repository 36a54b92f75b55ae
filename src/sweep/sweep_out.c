/* sweep_out.c - the ranked rows as a text table, CSV and an SVG scatter
 * plot written directly (a few dozen lines of SVG need no plotting
 * library). Numbers are printed from the row's doubles with fixed formats,
 * so identical rows give identical bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

#define GIB 1073741824.0

int ts_sweep_write_table(const ts_sweep_row *rows, uint32_t n, uint32_t top,
                         FILE *f) {
  fprintf(f, "%4s %3s %3s %3s %3s %4s %3s %4s %-11s %-9s %4s %-16s %10s %12s "
             "%6s %8s %8s %8s %8s %8s %8s\n", "rank", "tp", "cp", "pp", "v",
          "dp", "ep", "mb", "schedule", "recompute", "zero", "order",
          "step (s)", "tokens/s", "MFU", "mem GiB", "TP (s)", "PP (s)",
          "DP (s)", "EP (s)", "bubble");
  for (uint32_t i = 0; i < n && i < top; i++) {
    const ts_sweep_row *r = &rows[i];
    const ts_sweep_map *m = &r->map;
    fprintf(f, "%4u %3u %3u %3u %3u %4u %3u %4u %-11s %-9s %4u %-16s ", i + 1,
            m->tp, m->cp, m->pp, m->vp, m->dp, m->ep, m->mb,
            ts_schedule_name(m->schedule), ts_recompute_name(m->recompute),
            m->zero, m->order);
    if (r->status) {
      fprintf(f, "failed: %s\n", r->error);
      continue;
    }
    if (r->bounded) {
      fprintf(f, "bounded: step >= %.4f s\n", r->bound_s);
      continue;
    }
    fprintf(f, "%10.4f %12.0f %5.1f%% %8.1f %8.4f %8.4f %8.4f %8.4f %8.4f\n",
            r->step_s, r->tokens_s, 100 * r->mfu, m->mem_bytes / GIB,
            r->exposed_s[TS_DIM_TP], r->exposed_s[TS_DIM_PP],
            r->exposed_s[TS_DIM_DP], r->exposed_s[TS_DIM_EP], r->bubble_s);
  }
  return ferror(f) ? TS_EIO : 0;
}

static void csv_text(const char *s, FILE *f) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int ts_sweep_write_csv(const ts_sweep_row *rows, uint32_t n,
                       const char *const *topo_names, FILE *f) {
  fprintf(f, "topology,rank,tp,cp,pp,virtual_stages,dp,ep,micro_batch,"
             "schedule,recompute,zero_stage,order,status,step_s,tokens_per_s,"
             "mfu,memory_per_gpu_bytes,compute_s,exposed_tp_s,exposed_cp_s,"
             "exposed_ep_s,exposed_pp_s,exposed_dp_s,bubble_s,step_lower_bound_s,error\n");
  for (uint32_t i = 0; i < n; i++) {
    const ts_sweep_row *r = &rows[i];
    const ts_sweep_map *m = &r->map;
    csv_text(topo_names[m->topo], f);
    fprintf(f, ",%u,%u,%u,%u,%u,%u,%u,%u,%s,%s,%u,%s,%s,%.9g,%.9g,%.6g,%llu,"
               "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,", i + 1, m->tp, m->cp,
            m->pp, m->vp, m->dp, m->ep, m->mb, ts_schedule_name(m->schedule),
            ts_recompute_name(m->recompute), m->zero, m->order,
            r->bounded ? "bounded" : r->status ? "failed" : "ok", r->step_s,
            r->tokens_s, r->mfu,
            (unsigned long long)m->mem_bytes, r->compute_s,
            r->exposed_s[TS_DIM_TP], r->exposed_s[TS_DIM_CP],
            r->exposed_s[TS_DIM_EP], r->exposed_s[TS_DIM_PP],
            r->exposed_s[TS_DIM_DP], r->bubble_s, r->bound_s);
    csv_text(r->error, f);
    fputc('\n', f);
  }
  return ferror(f) ? TS_EIO : 0;
}

/* ---- SVG ---------------------------------------------------------------- */

enum { W = 900, H = 560, ML = 90, MR = 30, MT = 50, MB = 60 };

static void xml_text(const char *s, FILE *f) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* A round axis maximum: 1, 2 or 5 times a power of ten, >= v. */
static double nice_max(double v) {
  if (v <= 0) return 1;
  double p = 1;
  while (p * 10 <= v) p *= 10;
  while (p > v) p /= 10;
  for (int k = 1; k <= 10; k++)
    if (p * k >= v) return p * k;
  return p * 10;
}

static int cmp_mem(const void *a, const void *b) {
  const ts_sweep_row *x = *(const ts_sweep_row *const *)a;
  const ts_sweep_row *y = *(const ts_sweep_row *const *)b;
  if (x->map.mem_bytes != y->map.mem_bytes)
    return x->map.mem_bytes < y->map.mem_bytes ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static void axes(double xmax, double ymax, const char *title, FILE *f) {
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
  fputs("<text x=\"450\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">", f);
  xml_text(title, f);
  fputs("</text>\n", f);
  fprintf(f, "<g class=\"axes\" stroke=\"black\"><line x1=\"%d\" y1=\"%d\" "
             "x2=\"%d\" y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
             "y2=\"%d\"/></g>\n", ML, H - MB, W - MR, H - MB, ML, MT, ML, H - MB);
  for (int k = 0; k <= 5; k++) {
    double x = ML + (W - ML - MR) * k / 5.0, y = H - MB - (H - MT - MB) * k / 5.0;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
               "font-size=\"11\">%.4g</text>\n", x, H - MB + 16, xmax * k / 5);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
               "font-size=\"11\">%.4g</text>\n", ML - 6, y + 4, ymax * k / 5);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">"
             "memory per GPU (GiB)</text>\n", (W + ML - MR) / 2, H - 18);
  fprintf(f, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\" "
             "transform=\"rotate(-90 18 %d)\">tokens/s</text>\n", H / 2, H / 2);
}

int ts_sweep_write_svg(const ts_sweep_row *rows, uint32_t n, const char *title,
                       FILE *f) {
  uint8_t *front = calloc((size_t)n + 1, 1);
  const ts_sweep_row **fr = calloc((size_t)n + 1, sizeof *fr);
  if (!front || !fr) {
    free(front);
    free(fr);
    return TS_ENOMEM;
  }
  ts_sweep_pareto(rows, n, front);
  double xmax = 0, ymax = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!rows[i].status && !rows[i].bounded) {
      if (rows[i].map.mem_bytes / GIB > xmax) xmax = rows[i].map.mem_bytes / GIB;
      if (rows[i].tokens_s > ymax) ymax = rows[i].tokens_s;
    }
  xmax = nice_max(xmax), ymax = nice_max(ymax);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
             "www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
             "%d\" font-family=\"sans-serif\">\n", W, H, W, H);
  axes(xmax, ymax, title, f);
  uint32_t nf = 0, nok = 0;
  char lab[160];
  fputs("<g class=\"points\" fill=\"#4a78b5\" fill-opacity=\"0.6\">\n", f);
  for (uint32_t i = 0; i < n; i++) {
    if (rows[i].status || rows[i].bounded) continue;
    nok++;
    double x = ML + (W - ML - MR) * (rows[i].map.mem_bytes / GIB) / xmax;
    double y = H - MB - (H - MT - MB) * rows[i].tokens_s / ymax;
    ts_sweep_map_label(&rows[i].map, lab, sizeof lab);
    fprintf(f, "<circle class=\"point%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"%d\"%s>"
               "<title>%s: %.0f tokens/s, %.1f GiB</title></circle>\n",
            front[i] ? " front" : "", x, y, front[i] ? 5 : 3,
            front[i] ? " fill=\"#d62728\" fill-opacity=\"1\"" : "", lab,
            rows[i].tokens_s, rows[i].map.mem_bytes / GIB);
    if (front[i]) fr[nf++] = &rows[i];
  }
  fputs("</g>\n", f);
  qsort(fr, nf, sizeof *fr, cmp_mem);
  fputs("<polyline class=\"pareto\" fill=\"none\" stroke=\"#d62728\" "
        "stroke-width=\"1.5\" points=\"", f);
  for (uint32_t i = 0; i < nf; i++)
    fprintf(f, "%s%.2f,%.2f", i ? " " : "",
            ML + (W - ML - MR) * (fr[i]->map.mem_bytes / GIB) / xmax,
            H - MB - (H - MT - MB) * fr[i]->tokens_s / ymax);
  fputs("\"/>\n<g class=\"labels\" font-size=\"10\" fill=\"#d62728\">\n", f);
  for (uint32_t i = 0; i < nf; i++) {
    ts_sweep_map_label(&fr[i]->map, lab, sizeof lab);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%s</text>\n",
            ML + (W - ML - MR) * (fr[i]->map.mem_bytes / GIB) / xmax + 7,
            H - MB - (H - MT - MB) * fr[i]->tokens_s / ymax - 7, lab);
  }
  fprintf(f, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\" "
             "fill=\"#d62728\">Pareto front: %u of %u mappings</text>\n</svg>\n",
          W - MR, MT - 6, nf, nok);
  free(front);
  free(fr);
  return ferror(f) ? TS_EIO : 0;
}
