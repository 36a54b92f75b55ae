#!/usr/bin/env bash
# cli_layers.sh BIN SRCDIR [SANITIZED] - the module picture of
# docs/architecture.md, checked on the includes: `coll` is pure lowering
# (its own headers only), `work` compiles steps (topology and its own
# headers, the shared collective-op enum, no engine), and only `exec`
# (and the CLI above it) reaches sim, net and route together.
set -u
src=$2
. "$(dirname "$0")/lib.sh"

# coll: its private header and its public headers (ts_coll*.h, errors, units,
# budgets and checked arithmetic: the base headers every layer may use).
bad=$(grep -hE '#include "' "$src"/src/coll/*.[ch] |
      grep -vE '"coll/coll\.h"|"topsim/ts_coll(_op)?\.h"|"topsim/ts_(error|units|budget|checked)\.h"')
[ -z "$bad" ] || note "coll includes outside its layer: $bad"

# work: never the engine, network, router, collective layer or exec.
bad=$(grep -hE '#include "' "$src"/src/work/*.[ch] \
        "$src"/include/topsim/ts_work.h "$src"/include/topsim/ts_step_prog.h |
      grep -E 'ts_(sim|net|route|coll|exec|step|coll_run|p2p)\.h|"(sim|net|route|coll|exec)/')
[ -z "$bad" ] || note "work reaches into the engine side: $bad"

# Outside exec (and cli, tests), nobody builds an engine by hand.
bad=$(grep -lE 'ts_(sim|net|route)_new\(' "$src"/src/*/*.c |
      grep -vE '/src/(exec|sim|net|route)/')
[ -z "$bad" ] || note "engine wired outside exec: $bad"

# One enum of collective operations.
n=$(grep -rhE 'typedef enum ts_coll_(op|kind)' "$src"/include | wc -l)
[ "$n" = 1 ] || note "$n collective-operation enums in include/"

[ $fail -eq 0 ] && echo "layers: ok"
exit $((fail > 0))
