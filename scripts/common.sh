# common.sh - shared by demo.sh and test.sh: install what is missing, then
# configure and build. Sourced, not run.
set -euo pipefail

TOPSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOPSIM_PACKAGES=(build-essential cmake pkg-config libyaml-dev libxml2-dev
                 libcmocka-dev libjansson-dev libxml2-utils help2man
                 libopenmpi-dev openmpi-bin)
JOBS=$(nproc 2>/dev/null || echo 2)

# Installs the Debian packages in "$@" that are not installed yet.
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "topsim: installing missing packages: ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure_build DIR [cmake args...]: configure (once) and build DIR.
configure_build() {
  local dir=$1
  shift
  cmake -S "$TOPSIM_ROOT" -B "$TOPSIM_ROOT/$dir" "$@" >/dev/null
  cmake --build "$TOPSIM_ROOT/$dir" -j "$JOBS" >/dev/null
}
