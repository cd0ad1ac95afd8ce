"""The capture and live-KL tools (traces/capture/) on a tiny random-weight
DeepSeek-V3 config: trace shapes, the absorbed-score identity against the
model's own attention, the identity format's KL of exactly 0, and a capture
read back by `wzplan codec prepare` and `measure`."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "traces", "capture"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import corpus  # noqa: E402
import mla  # noqa: E402
import wzcapture  # noqa: E402
from tap import ok, done  # noqa: E402

torch.set_num_threads(min(2, os.cpu_count() or 1))
WZPLAN = os.environ.get("WZPLAN", os.path.join(ROOT, "wzplan"))
tmp = tempfile.mkdtemp(prefix="wzcapture-test.")
text = os.path.join(tmp, "doc.txt")
with open(text, "w") as f:
    for i in range(40):
        f.write(f"Paragraph {i}: the latent cache holds one vector per token and layer.\n"
                f"def f{i}(x):\n    return x * {i} + 1\n")


def capture(split, extra=()):
    out = os.path.join(tmp, split)
    wzcapture.main(["capture", "--tiny", "3", "--text", text, "--split", split, "--context", "384",
                    "--tokens", "256", "--queries", "6", "--out", out] + list(extra))
    return os.path.join(out, f"prose-{split}-c384-w0.safetensors")


# 1. shapes and metadata of a captured trace
from safetensors import safe_open  # noqa: E402
path = capture("test", ["--dtype", "f32"])
with safe_open(path, "pt") as f:
    meta = f.metadata()
    t = {k: f.get_tensor(k) for k in f.keys()}
model = mla.load_model(tiny_seed=3)
s = mla.shape_of(model)
L, R, P, H = s["L"], s["R"], s["P"], s["H"]
ok(tuple(t["latent"].shape) == (L, 256, R) and tuple(t["rope"].shape) == (L, 256, P),
   "latent [L, T, R] and rope [L, T, P]")
ok(tuple(t["q_latent"].shape) == (L, 6, H, R) and tuple(t["q_rope"].shape) == (L, 6, H, P),
   "absorbed queries [L, Q, H, R] and [L, Q, H, P]")
ok(t["positions"].tolist() == list(range(128, 384)), "positions are the window's last 256 of 384")
ok(meta["format"] == "wz-cache-trace" and meta["split"] == "test" and "capture:" in meta["source"]
   and meta["rope_layout"] == "interleaved", "metadata: format, split, source, rope layout")
ok(float(meta["rope_theta"]) == 10000.0 and meta["rope_yarn"] == "32.0,256.0,32.0,1.0",
   "metadata: the model's RoPE base and YaRN (factor 32 on 256 positions, betas 32 and 1)")
import wzplan  # noqa: E402
inv = model.model.rotary_emb.inv_freq.double().numpy()
ours = wzplan.rope_freqs(P, float(meta["rope_theta"]), [float(x) for x in meta["rope_yarn"].split(",")])
ok(np.allclose(ours, inv, rtol=2e-7, atol=0),
   f"the library's YaRN frequencies are the model's (largest relative difference "
   f"{np.max(np.abs(ours / inv - 1)):.2g})")
ok(abs(float(meta["softmax_scale"]) - model.model.layers[0].self_attn.scaling) < 1e-12,
   "softmax_scale is the attention's scaling (YaRN mscale included)")
lat_rms = t["latent"].pow(2).mean(-1).sqrt()
gain = torch.stack([m.kv_a_layernorm.weight.pow(2).mean().sqrt() for m in mla.attention_modules(model)])
ok(bool(torch.all((lat_rms.mean(-1) - gain).abs() < 0.05 * gain)),
   "the latent is c_kv after kv_a_layernorm (RMS = the norm's gain at init)")

# 2. absorbed scores reproduce the model's own attention probabilities
tok = wzcapture.tiny_tokenizer()
ids = np.asarray(tok.encode(open(text).read()).ids + [1], dtype=np.int64)[:384]
with torch.no_grad():
    out = model(input_ids=torch.from_numpy(ids).view(1, -1), output_attentions=True, use_cache=False)
worst = 0.0
for l in range(L):
    att = out.attentions[l][0]  # [H, T, T]
    for qi, q_pos_in_window in enumerate(t["q_index"].tolist()):
        pos = 128 + q_pos_in_window
        keys_lat = t["latent"][l, :q_pos_in_window + 1].double()
        keys_rope = t["rope"][l, :q_pos_in_window + 1].double()
        for h in range(H):
            # the trace holds the window's last 256 tokens: compare over the
            # context the trace holds, renormalised
            sc = s["scale"] * (keys_lat @ t["q_latent"][l, qi, h].double() + keys_rope @ t["q_rope"][l, qi, h].double())
            full = att[h, pos, :pos + 1].double()
            model_part = full[128:] / full[128:].sum()
            worst = max(worst, float((torch.softmax(sc, 0) - model_part).abs().max()))
ok(worst < 1e-5, f"absorbed scores reproduce the model's attention (max |dp| {worst:.2e})")

# 3. live KL: the identity format gives exactly 0; formats order as expected
cal = capture("calibration")
prof = os.path.join(tmp, "tiny.wzp")
r = subprocess.run([WZPLAN, "codec", "prepare", "--trace", cal, "--out", prof], capture_output=True, text=True)
ok(r.returncode == 0, "wzplan codec prepare reads a captured calibration trace", r.stderr)
r = subprocess.run([WZPLAN, "codec", "prepare", "--trace", path, "--out", prof + ".x"], capture_output=True, text=True)
ok(r.returncode == 2 and not os.path.exists(prof + ".x"), "... and refuses a captured test trace", r.stderr)
for prefix in ("exact", "live"):
    res_path = os.path.join(tmp, f"live-{prefix}.json")
    wzcapture.main(["livekl", "--tiny", "3", "--text", text, "--context", "384", "--score", "128",
                    "--categories", "prose", "--formats", "exact,fp8-mix,int4-g64,wz-6.31",
                    "--profile", prof, "--prefix", prefix, "--chunk", "100", "--out", res_path])
    with open(res_path) as f:
        res = json.load(f)["windows"][0]["results"]
    kl = {k: np.asarray(v["kl"]) for k, v in res.items()}
    ok(len(kl["exact"]) == 127 and np.all(kl["exact"] == 0.0) and np.all(np.asarray(res["exact"]["dlogloss"]) == 0.0),
       f"{prefix} prefix: the identity format's KL and log-loss change are exactly 0")
    ok(0 < kl["fp8-mix"].mean() < kl["int4-g64"].mean(),
       f"{prefix} prefix: fp8-mix KL {kl['fp8-mix'].mean():.2e} is above 0 and below int4's {kl['int4-g64'].mean():.2e}")
    import wzplan
    ok(res["fp8-mix"]["bytes"] * (R + P) == res["fp8-mix"]["values"] * wzplan.record_bytes("fp8-mix", R, P),
       f"{prefix} prefix: bits/value come from the bytes written")
# chunked prefill equals one prefill (the cache is used, not recomputed)
c1 = mla.CodecCache.new(model.config, None)
a, _ = mla.run(model, ids, c1, chunk=384, keep_last=50)
c2 = mla.CodecCache.new(model.config, None)
b, _ = mla.run(model, ids, c2, chunk=97, keep_last=50)
ok(float((a - b).abs().max()) < 1e-4, f"chunked prefill matches one prefill ({float((a - b).abs().max()):.1e})")

# 4. a capture read back by wzplan codec measure
r = subprocess.run([WZPLAN, "codec", "measure", "--trace", path, "--profile", prof, "--formats",
                    "fp8-mix,int4-g64,wz-6.31", "--format", "csv", "--no-archive"],
                   capture_output=True, text=True)
ok(r.returncode == 0, "wzplan codec measure reads a captured test trace", r.stderr)
rows = list(csv.DictReader(io.StringIO(r.stdout))) if r.returncode == 0 else []
fm = {row.get("format"): row for row in rows}
ok({"fp8-mix", "int4-g64", "wz-6.31"} <= set(fm) and float(fm["fp8-mix"]["nmse"]) < float(fm["int4-g64"]["nmse"]),
   "... with one row per format and fp8-mix below int4", r.stdout[:400])

# 4b. per-token errors: one row per format and layer; a token pushed far
# from the profile's distribution is named as an outlier
import contextlib  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402
spiked = {k: v.float().numpy().copy() for k, v in t.items()}
spiked["latent"][0, 100] = 0.0
spiked["latent"][0, 100, 7] = 40.0 * float(np.abs(spiked["latent"][0]).max())
spath = os.path.join(tmp, "spiked.safetensors")
save_file(spiked, spath, metadata=meta)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    wzcapture.main(["tokens", "--trace", spath, "--profile", prof, "--formats", "fp8-mix,wz-6.31", "--show", "1000"])
rows = [line.split("\t") for line in buf.getvalue().splitlines()[1:]]
ok(len(rows) == 2 * L and all(float(r_[2]) >= 0 for r_ in rows), f"tokens: {len(rows)} rows, one per format and layer")
wz0 = [r_ for r_ in rows if r_[0] == "wz-6.31" and r_[1] == "0"][0]
ok(str(int(t["positions"][100])) in wz0[6].split(","), f"tokens: the spiked token is named ({wz0})")

# 5. the corpus split is by document name and stable
names = [f"pkg:doc{i}.rst" for i in range(2000)]
splits = [corpus.split_of(n) for n in names]
ok(splits == [corpus.split_of(n) for n in names], "a document's split depends on its name only")
share = {k: splits.count(k) / len(splits) for k in ("train", "calibration", "test")}
ok(0.03 < share["test"] < 0.08 and 0.03 < share["calibration"] < 0.08,
   f"test and calibration take about 5% each ({share})")
w = wzcapture.windows_of(np.arange(1000), 300, 3)
ok([x[0] for x in w] == [0, 300, 600] and all(len(x) == 300 for x in w), "windows never share a token")
done()
