#!/usr/bin/env python3
"""Writes the seed corpus of the wzx container fuzz target from the golden
container and profile (tests/codec/golden/): the valid input, and one file
per kind of damage, each with and without checksum resealing (flag byte 1:
the target recomputes the checksums so the damage reaches the field checks
and the rANS decoder).  Run from the repository root; the output is
committed, so the build never needs Python."""
import os
import struct

OUT = "tests/fuzz/corpus/wzx_decode"
TINY = "tests/codec/golden/tiny.wzp"
# version 1 (read, no longer written) under the old names; version 2 with
# "v2-" (read, no longer written); version 3 with "v3-" (likewise); version
# 4 with "v4-" (its blocks are raw on tiny's narrow tokens; type 4 itself
# is fuzzed by tests/codec/test_wzx_lanes4's damaged payloads); version 5
# with "v5-" (raw blocks likewise), and "v5t-", a few of the damaged
# payloads of tiny4's type 5 blocks (its profile is 100 KB a file, so
# only those); version 6 with "v6-" and "v6t-" (type 6 blocks) likewise
CONTAINERS = (("", "tests/codec/golden/tiny.wzx", 2, TINY, False),
              ("v2-", "tests/codec/golden/tiny-v2.wzx", 3, TINY, False),
              ("v3-", "tests/codec/golden/tiny-v3.wzx", 4, TINY, False),
              ("v4-", "tests/codec/golden/tiny-v4.wzx", 5, TINY, False),
              ("v5-", "tests/codec/golden/tiny-v5.wzx", 6, TINY, False),
              ("v5t-", "tests/codec/golden/tiny4-v5.wzx", 6, "tests/codec/golden/tiny4.wzp", True),
              ("v6-", "tests/codec/golden/tiny-v6.wzx", 7, TINY, False),
              ("v6t-", "tests/codec/golden/tiny4-v6.wzx", 7, "tests/codec/golden/tiny4.wzp", True))


def case(name, c, flags=0):
    with open(os.path.join(OUT, prefix + name), "wb") as f:
        f.write(bytes([flags]) + struct.pack("<I", len(prof)) + prof + bytes(c))


def patched(at, data):
    c = bytearray(cont)
    c[at:at + len(data)] = data
    return c


os.makedirs(OUT, exist_ok=True)
for prefix, path, newer, profile, few in CONTAINERS:
    prof = open(profile, "rb").read()
    cont = open(path, "rb").read()
    mlen = struct.unpack_from("<I", cont, 48)[0]
    H = 56 + ((mlen + 7) & ~7) + 8
    ioff = struct.unpack_from("<Q", cont, len(cont) - 24)[0]
    nblocks = (len(cont) - 24 - ioff) // 16
    first = struct.unpack_from("<Q", cont, ioff)[0]
    if few:
        case("valid-resealed", cont, 1)
        case("truncated-middle-resealed", cont[:len(cont) // 2], 1)
        for i, at in enumerate((first + 16, first + 20, first + 40, ioff - 30)):
            c = bytearray(cont)
            c[at] ^= 0x5A
            case("payload-flipped-%d-resealed" % i, c, 1)
        continue
    case("valid", cont)
    case("valid-resealed", cont, 1)
    case("empty", b"")
    for flags in (0, 1):
        s = "-resealed" if flags else ""
        case("truncated-header" + s, cont[:40], flags)
        case("truncated-middle" + s, cont[:len(cont) // 2], flags)
        case("truncated-footer" + s, cont[:-5], flags)
        case("version-%d" % newer + s, patched(8, struct.pack("<I", newer)), flags)
        case("flags-set" + s, patched(12, struct.pack("<I", 1)), flags)
        case("layers-huge" + s, patched(16, struct.pack("<I", 0xFFFFFFFF)), flags)
        case("tokens-huge" + s, patched(28, struct.pack("<I", 0x7FFFFFFF)), flags)
        case("record-size-zero" + s, patched(32, struct.pack("<I", 0)), flags)
        case("model-length-huge" + s, patched(48, struct.pack("<I", 4096)), flags)
        case("index-offset-wrong" + s, patched(len(cont) - 24, struct.pack("<Q", ioff - 16)), flags)
        case("index-entry-overlap" + s, patched(ioff + 16, struct.pack("<Q", first)), flags)
        case("index-size-small" + s, patched(ioff + 8, struct.pack("<I", 3)), flags)
        case("block-type-bad" + s, patched(first + 13, b"\x07"), flags)
        case("block-payload-size" + s, patched(first + 8, struct.pack("<I", 1)), flags)
        for i, at in enumerate((first + 16, first + 20, first + 40, ioff - 30)):
            c = bytearray(cont)
            c[at] ^= 0x5A
            case("payload-flipped-%d%s" % (i, s), c, flags)
