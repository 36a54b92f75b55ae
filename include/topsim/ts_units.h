/* ts_units.h - strict parsing and printing of quantities with units.
 *
 * topsim keeps time as integer picoseconds (uint64_t: 2^64 ps is ~213 days of
 * simulated time, far beyond one training step) and rates as doubles in
 * bytes/s. Units are decimal for rates (1 GB/s = 1e9 B/s, 1 Gb/s = 1.25e8 B/s:
 * bits and bytes kept apart by the case of the b) and binary only when spelled
 * so for sizes (KiB/MiB/GiB vs KB/MB/GB). A bare number or an unknown unit is
 * an error: every parser returns TS_ESCHEMA and leaves *out untouched. */
#ifndef TOPSIM_TS_UNITS_H
#define TOPSIM_TS_UNITS_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t ts_time_ps; /* simulated time in picoseconds */

#define TS_PS_PER_NS 1000ULL
#define TS_PS_PER_US 1000000ULL
#define TS_PS_PER_MS 1000000000ULL
#define TS_PS_PER_S 1000000000000ULL

/* The largest latency or overhead an input may give: 1 hour. Any real one
 * is under a second; the cap keeps every sum of hop latencies far below
 * 2^64 ps. */
#define TS_MAX_LATENCY_PS (3600ULL * TS_PS_PER_S)
/* The largest simulated-time budget (ts_budget.h) that may be set: 2x10^6 s.
 * Horizon + a capped transfer time (2^62 ps) + latencies stays below 2^64. */
#define TS_MAX_SIM_TIME_PS (2000000ULL * TS_PS_PER_S)

/* "450GB/s", "400Gb/s", "25 GB/s", "1.6TB/s" -> bytes per second. */
int ts_parse_bandwidth(const char *text, double *bytes_per_s);
/* "500ns", "1.2us", "3ms", "0ns" -> picoseconds (rounded to nearest).
 * TS_ELIMIT (not a wrapped value) for 2^63 ps or more. */
int ts_parse_latency(const char *text, ts_time_ps *ps);
/* "8GiB", "64KiB", "80GB", "512B" -> bytes (must be integral). */
int ts_parse_size(const char *text, uint64_t *bytes);
/* "989TFLOP/s", "1.98PFLOP/s" -> FLOP per second. */
int ts_parse_flops(const char *text, double *flop_per_s);
/* Power (W, kW) -> watts; accepted for node templates. */
int ts_parse_power(const char *text, double *watts);

/* Converters with unit-typed names (doubles only at the edges). */
static inline double ts_ps_to_us(ts_time_ps t) { return (double)t / 1e6; }
static inline double ts_ps_to_s(ts_time_ps t) { return (double)t / 1e12; }
static inline ts_time_ps ts_time_from_ns(double ns) {
  return (ts_time_ps)(ns * 1e3 + 0.5);
}

/* Prints a rate as "25 GB/s" style (decimal, 4 significant digits). */
void ts_format_bandwidth(double bytes_per_s, char *buf, size_t len);
/* Prints a size as "64 KiB" style when exact in binary units, else bytes. */
void ts_format_size(uint64_t bytes, char *buf, size_t len);

#endif
