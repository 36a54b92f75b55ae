#!/usr/bin/env python3
"""Writes bad/binary_garbage.yaml: a topology header followed by 256 bytes
from a fixed linear congruential generator (so the bytes never change),
starting with 0xFF and a NUL so both the UTF-8 and the control-character
checks of libyaml's reader would fire. Run from tests/data/; commit the
output, not just this script."""

HEADER = b"topsim: 1\nname: x\nnodes: "


def lcg_bytes(n, seed=0x746F7073):
    x = seed
    out = bytearray()
    for _ in range(n):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        out.append((x >> 16) & 0xFF)
    return bytes(out)


with open("bad/binary_garbage.yaml", "wb") as f:
    f.write(HEADER + b"\xff\x00" + lcg_bytes(256) + b"\n")
