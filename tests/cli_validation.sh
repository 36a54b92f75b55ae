#!/usr/bin/env bash
# cli_validation.sh BIN SRCDIR [SANITIZED] - the published nccl-tests curves
# of tests/validation/ against `topsim bench`: every curve must meet the
# targets of docs/validation.md (median |busbw error| <= 15% over all sizes,
# <= 10% from 64 MiB up, no step the measured curve lacks) unless its file
# marks it as a known miss, which must then still miss (validate.py).
set -u
bin=$1
src=$2
if ! command -v python3 >/dev/null; then echo "SKIP: python3 missing"; exit 0; fi
python3 "$src/tests/validation/validate.py" --topsim "$bin" --root "$src" --check --quiet
rc=$?
[ $rc -eq 0 ] && echo "validation: every curve as expected" || echo "FAIL: validation targets"
exit $rc
