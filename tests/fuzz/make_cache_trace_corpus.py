#!/usr/bin/env python3
"""Writes the seed corpus of the cache-trace fuzz target: small valid
traces and one file per way the reader must refuse (docs/cache-trace.md,
"What the reader checks").  Run from the repository root; the output is
committed, so the build never needs Python."""
import json
import os
import struct

OUT = "tests/fuzz/corpus/cache_trace"


def safetensors(tensors, meta, pad=True):
    """tensors: list of (name, dtype, shape, raw bytes); offsets follow."""
    header, data, off = {"__metadata__": meta} if meta is not None else {}, b"", 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - (len(h) + 8) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def bf16(values):
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def i64(values):
    return struct.pack("<%dq" % len(values), *values)


L, T, R, P, Q, H = 1, 3, 4, 2, 1, 1
META = {"format": "wz-cache-trace", "version": "1", "model": "fuzz", "softmax_scale": "0.125",
        "split": "calibration", "window": "w", "source": "make_cache_trace_corpus.py"}
lat = [0.5 * i - 2 for i in range(L * T * R)]
rope = [0.25 * i for i in range(L * T * P)]
ql = [1.0 - 0.1 * i for i in range(L * Q * H * R)]
qr = [0.3] * (L * Q * H * P)


def trace(dtype="F32", conv=f32, meta=META, queries=True, latent=None, extra=()):
    ts = [("positions", "I64", [T], i64(range(T)))]
    if queries:
        ts.append(("q_index", "I64", [Q], i64([T - 1])))
    ts += [("latent", dtype, [L, T, R], conv(latent or lat)), ("rope", dtype, [L, T, P], conv(rope))]
    if queries:
        ts += [("q_latent", dtype, [L, Q, H, R], conv(ql)), ("q_rope", dtype, [L, Q, H, P], conv(qr))]
    return safetensors(ts + list(extra), meta)


def edit(data, old, new):
    """Replaces text in the header and fixes the header length."""
    n = struct.unpack("<Q", data[:8])[0]
    h = data[8:8 + n].replace(old, new, 1)
    return struct.pack("<Q", len(h)) + h + data[8 + n:]


good = trace()
files = {
    "valid-f32": good,
    "valid-bf16-noqueries": trace("BF16", bf16, queries=False),
    "valid-extra-tensor": trace(extra=[("notes", "U8", [3], b"abc")]),
    "empty": b"",
    "short": b"\x10\x00\x00",
    "truncated-data": good[:-5],
    "truncated-header": good[:40],
    "header-length-past-end": struct.pack("<Q", len(good)) + good[8:],
    "header-length-huge": b"\xff" * 8 + good[8:],
    "header-length-zero": b"\0" * 8 + good[8:],
    "header-not-json": struct.pack("<Q", 6) + b"{nope}",
    "header-array": struct.pack("<Q", 2) + b"[]",
    "bad-offsets": edit(good, b'"data_offsets":[0,24]', b'"data_offsets":[0,32]'),
    "overlap": edit(good, b'"data_offsets":[24,32]', b'"data_offsets":[16,24]'),
    "offsets-huge": edit(good, b'"data_offsets":[0,24]', b'"data_offsets":[0,18446744073709551615]'),
    "shape-mismatch": edit(good, b'"shape":[1,3,4]', b'"shape":[1,3,5]'),
    "shape-overflow": edit(good, b'"shape":[1,3,4]', b'"shape":[4294967296,4294967296,4294967296]'),
    "shape-negative": edit(good, b'"shape":[1,3,4]', b'"shape":[1,-3,4]'),
    "unknown-dtype": edit(good, b'"dtype":"F32"', b'"dtype":"F31"'),
    "missing-latent": edit(good, b'"latent"', b'"latenX"'),
    "missing-queries-part": edit(good, b'"q_rope"', b'"q_ropX"'),
    "trailing-bytes": good + b"\0" * 8,
    "nan": trace(latent=lat[:5] + [float("nan")] + lat[6:]),
    "inf": trace(latent=lat[:7] + [float("-inf")] + lat[8:]),
    "no-metadata": trace(meta=None),
    "wrong-version": trace(meta=dict(META, version="2")),
    "bad-split": trace(meta=dict(META, split="train")),
    "bad-softmax-scale": trace(meta=dict(META, softmax_scale="nan")),
    "valid-rope": trace(meta=dict(META, rope_theta="10000", rope_yarn="32,1024,32,1")),
    "bad-rope-theta": trace(meta=dict(META, rope_theta="1")),
    "bad-rope-yarn": trace(meta=dict(META, rope_theta="10000", rope_yarn="32,1024,1,32")),
    "rope-yarn-alone": trace(meta=dict(META, rope_yarn="32,1024,32,1")),
}
# q_index past the tokens: patch its value in the data.
d = bytearray(good)
hl = struct.unpack("<Q", d[:8])[0]
off = 8 + hl + 24  # q_index follows positions (3 x 8 bytes)
d[off:off + 8] = struct.pack("<q", 99)
files["q-index-out-of-range"] = bytes(d)

os.makedirs(OUT, exist_ok=True)
for name, data in files.items():
    with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
        f.write(data)
