/* fuzz_units.c - libFuzzer harness for the quantity and size parsers: the
 * topology units (ts_parse_*), the CLI's byte sizes and whole numbers
 * (cli_args.c, linked in) and the budget values. Every parser either
 * refuses or returns a value consistent with its contract (no wrap: a
 * parsed byte size is at least its leading number), never undefined
 * behaviour (float-cast-overflow included). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "topsim/ts_budget.h"
#include "topsim/ts_units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cli_args.c reports through this; the fuzzer wants silence. */
int cli_usage_error(const char *cmd, const char *fmt, ...) {
  (void)cmd;
  (void)fmt;
  return 64;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256) return 0;
  char s[257];
  memcpy(s, data, size);
  s[size] = '\0';
  double v;
  ts_time_ps ps;
  uint64_t u;
  if (ts_parse_bandwidth(s, &v) == 0 && !(v >= 0)) __builtin_trap();
  if (ts_parse_flops(s, &v) == 0 && !(v >= 0)) __builtin_trap();
  if (ts_parse_power(s, &v) == 0 && !(v >= 0)) __builtin_trap();
  if (ts_parse_latency(s, &ps) == 0 && ps >= (1ULL << 63)) __builtin_trap();
  (void)ts_parse_size(s, &u);
  if (cli_parse_bytes("fuzz", "-b", s, &u) == 0 && u < strtoull(s, NULL, 10))
    __builtin_trap(); /* a multiplier never makes a size smaller */
  (void)cli_parse_uint("fuzz", "-n", s, 1, 1000, &u);
  ts_budget b;
  ts_budget_default(&b);
  ts_diag d;
  for (int i = 0; i < TS_BUDGET_COUNT; i++) (void)ts_budget_parse(&b, i, s, &d);
  char buf[64];
  ts_format_size(u, buf, sizeof buf);
  ts_format_bandwidth(v, buf, sizeof buf);
  return 0;
}
