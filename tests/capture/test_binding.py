"""libwzplan's Python binding (python/wzplan.py) against the library's own
behaviour and independent references."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402

import wzplan  # noqa: E402
from tap import ok, raises, done  # noqa: E402

rng = np.random.default_rng(7)

names = [f[0] for f in wzplan.formats()]
ok({"bf16", "fp8-mix", "int4-g64", "nvfp4", "wz", "wzx"} <= set(names), "the registry lists the formats")
ok(wzplan.canonical("FP8-MIX") == "fp8-mix", "canonical names")
e = raises(lambda: wzplan.canonical("fp9"), wzplan.WzError, "unknown format raises")
ok(e is not None and e.code == 5 and "fp9" in str(e), "error code and message name the format", e)
ok(wzplan.record_bytes("fp8-mix", 512, 64) == 580 and wzplan.record_bytes("bf16", 512, 64) == 1152,
   "record sizes of the registry (DESIGN.md)")
ok(wzplan.record_bytes("int4-g64", 60, 4) == 0, "a shape a format cannot hold has no record size")

# bf16 round trip equals numpy's round-to-nearest-even to bf16
L, T, R, P = 2, 40, 64, 16
lat = rng.standard_normal((T, R)).astype(np.float32) * 3
rp = rng.standard_normal((T, P)).astype(np.float32)
c = wzplan.Codec("bf16", L, R, P)


def bf16(x):
    u = x.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


lo, ro = c.roundtrip(1, lat, rp)
ok(np.array_equal(lo, bf16(lat)) and np.array_equal(ro, bf16(rp)), "bf16 round trip is bf16 rounding")
rec = c.encode(0, lat, rp)
ok(rec.shape == (T, (R + P) * 2) and rec.dtype == np.uint8, "records: one row per token")
d_lat, d_rp = c.decode(0, rec)
ok(np.array_equal(d_lat, lo) and np.array_equal(d_rp, ro), "decode(encode) equals roundtrip")
ok(c.window_bytes(np.zeros((L, T, R)), np.zeros((L, T, P))) == L * T * (R + P) * 2,
   "window bytes of a fixed-rate format: L x T records")

# Values no cache holds, and layer indices the C int would wrap, are refused.
nan_lat = lat.copy()
nan_lat[3, 5] = np.nan
e = raises(lambda: c.encode(0, nan_lat, rp), ValueError, "a NaN in the latent is refused")
ok(e is not None and "latent" in str(e) and "(3, 5)" in str(e), "... naming the array and the place", e)
inf_rp = rp.copy()
inf_rp[0, 0] = np.inf
raises(lambda: c.roundtrip(0, lat, inf_rp), ValueError, "an infinity in the rope part is refused")
e = raises(lambda: c.encode(2**32, lat, rp), ValueError, "layer 2**32 is refused, not wrapped to 0")
ok(e is not None and "outside 0..1" in str(e), "... naming the range", e)
raises(lambda: c.decode(-1, rec), ValueError, "layer -1 is refused")
raises(lambda: c.roundtrip(L, lat, rp), ValueError, "layer L is refused")
raises(lambda: c.encode(0.5, lat, rp), TypeError, "a fractional layer is refused")
raises(lambda: wzplan.rope_freqs(16, float("nan")), ValueError, "a NaN RoPE base is refused")

# fp8-mix: error well below int4's, records of the registry size
c8 = wzplan.Codec("fp8-mix", L, R, P)
c4 = wzplan.Codec("int4-g64", L, R, P)
l8, r8 = c8.roundtrip(0, lat, rp)
l4, r4 = c4.roundtrip(0, lat, rp)
n8 = np.sum((l8 - lat) ** 2) / np.sum(lat ** 2)
n4 = np.sum((l4 - lat) ** 2) / np.sum(lat ** 2)
ok(0 < n8 < n4 / 4, f"fp8-mix latent nmse {n8:.2e} below int4's {n4:.2e} / 4")

raises(lambda: c8.roundtrip(L, lat, rp), ValueError, "a layer outside a baseline codec raises before the library")
raises(lambda: c.roundtrip(0, lat[:, :10], rp), ValueError, "a wrong width raises before the library")
raises(lambda: c.decode(0, rec[:, :5]), ValueError, "records of the wrong size raise")
e = raises(lambda: wzplan.Codec("wz-5.44", L, R, P), wzplan.WzError, "wz without a profile raises")
ok(e is not None and e.code == 6, "... with WZ_ERR_MISSING", e)

# prepare: refuses test windows, writes a profile the program reads
win = dict(latent=rng.standard_normal((L, 256, R)).astype(np.float32),
           rope=rng.standard_normal((L, 256, P)).astype(np.float32), model="binding-test",
           split="calibration", name="w0")
e = raises(lambda: wzplan.Profile.prepare([dict(win, split="test")]), wzplan.WzError,
           "prepare refuses a test window")
ok(e is not None and e.code == 10, "... with WZ_ERR_REFUSED", e)
prof = wzplan.Profile.prepare([win])
ok(prof.shape == (L, R, P) and prof.model == "binding-test", "a prepared profile has the window's shape and model")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "p.wzp")
    prof.save(path)
    again = wzplan.Profile.load(path)
    ok(again.shape == (L, R, P), "a saved profile loads again")
    wz = wzplan.Codec("wz-6.31", L, R, P, again)
    lw, rw = wz.roundtrip(0, win["latent"][0], win["rope"][0])
    nw = np.sum((lw - win["latent"][0]) ** 2) / np.sum(win["latent"][0] ** 2)
    ok(0 < nw < 0.05, f"wz-6.31 codes through the binding (nmse {nw:.3g})")
    ok(wz.record_bytes * 8 / (R + P) <= 6.31 + 1e-9, "wz-6.31 records fit the rate")
    wzx = wzplan.Codec("wzx-5.43", L, R, P, again)
    nbytes = wzx.window_bytes(win["latent"], win["rope"])
    ok(0 < nbytes < L * 256 * wzx.record_bytes * 1.1, f"wzx window bytes come from the container ({nbytes})")
    # the C codec holds its profile: closing the profile first (as garbage
    # collection at interpreter exit may) leaves the codec working
    again2 = wzplan.Profile.load(path)
    wz2 = wzplan.Codec("wz-6.31", L, R, P, again2)
    again2.close()
    lw2, _ = wz2.roundtrip(0, win["latent"][0], win["rope"][0])
    wz2.close()
    ok(np.array_equal(lw, lw2), "a codec works on after its profile is closed")
    bad = os.path.join(tmp, "bad.wzp")
    with open(bad, "wb") as f:
        f.write(b"not a profile at all")
    e = raises(lambda: wzplan.Profile.load(bad), wzplan.WzError, "a corrupt profile raises")
    ok(e is not None and "bad.wzp" in str(e), "... naming the file", e)
# a profile that undoes RoPE: positions go with encode and decode
Tr = 512
pos = np.arange(Tr, dtype=np.int64)
freq = 10000.0 ** (-np.arange(0, P, 2) / P)
pre = rng.standard_normal((L, Tr, P)) @ rng.standard_normal((P, P)) * 0.3 + 1.0  # a mean, correlated
ang = pos[:, None] * freq[None, :]
c, s_ = np.cos(ang), np.sin(ang)
rot = np.empty_like(pre)
rot[..., 0::2] = pre[..., 0::2] * c - pre[..., 1::2] * s_
rot[..., 1::2] = pre[..., 0::2] * s_ + pre[..., 1::2] * c
rwin = dict(latent=rng.standard_normal((L, Tr, R)).astype(np.float32), rope=rot.astype(np.float32),
            positions=pos, model="binding-test", split="calibration", name="r0")
rp_prof = wzplan.Profile.prepare([rwin], rope_freq=freq)
plain_prof = wzplan.Profile.prepare([rwin])
wr = wzplan.Codec("wz-5.44", L, R, P, rp_prof)
wp = wzplan.Codec("wz-5.44", L, R, P, plain_prof)
lat0, rope0 = rwin["latent"][1], rwin["rope"][1]
lo, ro = wr.roundtrip(1, lat0, rope0, pos)
lq, rq = wp.roundtrip(1, lat0, rope0)
er = np.sum((ro - rope0) ** 2) / np.sum(rope0 ** 2)
energy = np.sum(lat0 ** 2) + np.sum(rope0 ** 2)
tr = (np.sum((lo - lat0) ** 2) + np.sum((ro - rope0) ** 2)) / energy
tp = (np.sum((lq - lat0) ** 2) + np.sum((rq - rope0) ** 2)) / energy
# without queries the plan minimises the plain squared error of both parts,
# so the bits undoing RoPE saves on the position part go where they help
ok(tr < 0.9 * tp, f"undoing RoPE codes the window better (nmse {tr:.3g} against {tp:.3g})")
rec = wr.encode(1, lat0, rope0, positions=pos)
_, at = wr.decode(1, rec, positions=pos)
_, off = wr.decode(1, rec, positions=pos + 7)
ok(np.array_equal(at, ro), "encode then decode at the positions is roundtrip at them")
eo = np.sum((off - rope0) ** 2) / np.sum(rope0 ** 2)
ok(eo > 10 * er, f"decoded at other positions the position part is wrong ({eo:.3g})")
raises(lambda: wr.encode(1, lat0, rope0, positions=pos[:10]), ValueError, "positions of the wrong length raise")
raises(lambda: wzplan.Profile.prepare([rwin], rope_freq=freq[:3]), wzplan.WzError,
       "frequencies of the wrong count raise")
one = wzplan.Profile.prepare([rwin], rope_freq=freq, rope_layers=[1])
w1 = wzplan.Codec("wz-5.44", L, R, P, one)
_, r0a = w1.roundtrip(0, rwin["latent"][0], rwin["rope"][0], pos)
_, r0b = wp.roundtrip(0, rwin["latent"][0], rwin["rope"][0], pos)
ok(np.array_equal(r0a, r0b), "a layer left out of rope_layers codes as the plain profile does")
raises(lambda: wzplan.Profile.prepare([rwin], rope_freq=freq, rope_layers=[L]), ValueError,
       "a layer outside the profile raises")
done()
