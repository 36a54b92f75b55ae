/* topo_units.c - strict quantity parsing (see ts_units.h).
 *
 * Grammar: NUMBER [spaces] UNIT, NUMBER a plain decimal (digits with at most
 * one point: no sign, exponent, hex, inf or nan), UNIT matched exactly and case-sensitively from the
 * tables below ("Gb/s" is bits, "GB/s" bytes). Anything else is rejected.
 * Cost: O(length) per call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topsim/ts_error.h"
#include "topsim/ts_units.h"

typedef struct unit {
  const char *name;
  double scale;
} unit;

static const unit bandwidth_units[] = {
    {"B/s", 1.0},         {"KB/s", 1e3},        {"MB/s", 1e6},
    {"GB/s", 1e9},        {"TB/s", 1e12},       {"b/s", 0.125},
    {"Kb/s", 1e3 / 8},    {"Mb/s", 1e6 / 8},    {"Gb/s", 1e9 / 8},
    {"Tb/s", 1e12 / 8},   {"GiB/s", 1073741824.0}, {"MiB/s", 1048576.0},
    {NULL, 0}};
static const unit latency_units[] = {
    {"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}, {NULL, 0}};
static const unit size_units[] = {
    {"B", 1.0},   {"KiB", 1024.0},      {"MiB", 1048576.0},
    {"GiB", 1073741824.0},             {"TiB", 1099511627776.0},
    {"KB", 1e3},  {"MB", 1e6},          {"GB", 1e9},
    {"TB", 1e12}, {NULL, 0}};
static const unit flops_units[] = {{"FLOP/s", 1.0},   {"GFLOP/s", 1e9},
                                   {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15},
                                   {NULL, 0}};
static const unit power_units[] = {{"W", 1.0}, {"kW", 1e3}, {NULL, 0}};

/* Splits text into a non-negative finite number and a known unit. */
static int parse_quantity(const char *text, const unit *units, double *out) {
  if (!text) return TS_ESCHEMA;
  /* Only plain decimals: strtod alone would also take hex, inf and nan. */
  size_t digits = strspn(text, "0123456789.");
  if (digits == 0 || digits > 64) return TS_ESCHEMA;
  char num[65];
  memcpy(num, text, digits);
  num[digits] = '\0';
  char *end = NULL;
  double v = strtod(num, &end);
  if (*end || !isfinite(v)) return TS_ESCHEMA;
  end = (char *)text + digits;
  while (*end == ' ') end++;
  for (const unit *u = units; u->name; u++) {
    if (strcmp(end, u->name) == 0) {
      *out = v * u->scale;
      return 0;
    }
  }
  return TS_ESCHEMA;
}

int ts_parse_bandwidth(const char *text, double *bytes_per_s) {
  return parse_quantity(text, bandwidth_units, bytes_per_s);
}

int ts_parse_latency(const char *text, ts_time_ps *ps) {
  double v;
  int rc = parse_quantity(text, latency_units, &v);
  if (rc) return rc;
  /* llround is undefined past int64: refuse 2^63 ps (106 days) and up. */
  if (v >= 9223372036854775808.0) return TS_ELIMIT;
  *ps = (ts_time_ps)llround(v);
  return 0;
}

int ts_parse_size(const char *text, uint64_t *bytes) {
  double v;
  int rc = parse_quantity(text, size_units, &v);
  if (rc) return rc;
  if (v > 1.8e19 || v != floor(v)) return TS_ESCHEMA;
  *bytes = (uint64_t)v;
  return 0;
}

int ts_parse_flops(const char *text, double *flop_per_s) {
  return parse_quantity(text, flops_units, flop_per_s);
}

int ts_parse_power(const char *text, double *watts) {
  return parse_quantity(text, power_units, watts);
}

void ts_format_bandwidth(double bytes_per_s, char *buf, size_t len) {
  if (bytes_per_s >= 1e12)
    snprintf(buf, len, "%.4g TB/s", bytes_per_s / 1e12);
  else if (bytes_per_s >= 1e9)
    snprintf(buf, len, "%.4g GB/s", bytes_per_s / 1e9);
  else if (bytes_per_s >= 1e6)
    snprintf(buf, len, "%.4g MB/s", bytes_per_s / 1e6);
  else
    snprintf(buf, len, "%.4g B/s", bytes_per_s);
}

void ts_format_size(uint64_t bytes, char *buf, size_t len) {
  static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (i < 4 && bytes && bytes % 1024 == 0) {
    bytes /= 1024;
    i++;
  }
  snprintf(buf, len, "%llu %s", (unsigned long long)bytes, names[i]);
}
