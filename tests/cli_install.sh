#!/usr/bin/env bash
# cli_install.sh - `cmake --install` into a temporary prefix, then build a
# tiny program against it twice: through find_package(topsim) (the CMake
# package exporting topsim::topsim) and through pkg-config (topsim.pc).
# Both must print what `topsim topo --json` says about the same file.
# Args: topsim binary, source dir, sanitize (ON/OFF).
set -euo pipefail
BIN=$1 SRC=$2 SAN=${3:-OFF}
BUILD=$(dirname "$BIN")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
P=$TMP/prefix
LIBDIR=$(ls -d "$P"/lib*/ | head -1)
for f in bin/topsim include/topsim/ts_topo.h include/topsim/ts_version.h; do
  [ -f "$P/$f" ] || fail "$f not installed"
done
[ -f "$LIBDIR/libtopsim.a" ] || fail "libtopsim.a not installed"
[ -f "$LIBDIR/pkgconfig/topsim.pc" ] || fail "topsim.pc not installed"
[ -f "$LIBDIR/cmake/topsim/topsimConfig.cmake" ] || fail "CMake package not installed"
if command -v help2man >/dev/null; then
  man=$P/share/man/man1/topsim.1
  [ -f "$man" ] || fail "topsim.1 not installed"
  grep -q '^\.SS topsim check' "$man" || fail "man page lacks the check command"
  grep -q '^\.TH TOPSIM' "$man" || fail "man page has no .TH header"
fi
# The installed binary runs and knows its version.
ver=$("$P/bin/topsim" -V)
[[ $ver =~ ^topsim\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "topsim -V printed '$ver'"

TOPO=$SRC/topologies/superpod-a100-1su.yaml
# 160 GPUs, 1920 GB/s: superpod-a100-1su's 160 HDR NICs x 24 GB/s / 2.
want="${ver#topsim } superpod-a100-1su gpus 160 bisection 1920.0 GB/s"

flags=()
[ "$SAN" = ON ] && flags=(-DCMAKE_C_FLAGS=-fsanitize=address,undefined
                          -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
cmake -S "$SRC/tests/install" -B "$TMP/consumer" -DCMAKE_PREFIX_PATH="$P" \
  "${flags[@]}" >/dev/null || fail "find_package(topsim) failed"
cmake --build "$TMP/consumer" >/dev/null || fail "consumer build failed"
got=$("$TMP/consumer/consumer" "$TOPO")
[ "$got" = "$want" ] || fail "CMake consumer printed '$got', want '$want'"

san=()
[ "$SAN" = ON ] && san=(-fsanitize=address,undefined)
# shellcheck disable=SC2046
PKG_CONFIG_PATH=$LIBDIR/pkgconfig cc -std=c11 "${san[@]}" -o "$TMP/pc" \
  "$SRC/tests/install/main.c" $(PKG_CONFIG_PATH=$LIBDIR/pkgconfig pkg-config --cflags --libs topsim) \
  || fail "pkg-config build failed"
got=$("$TMP/pc" "$TOPO")
[ "$got" = "$want" ] || fail "pkg-config consumer printed '$got', want '$want'"
echo "install: ok"
