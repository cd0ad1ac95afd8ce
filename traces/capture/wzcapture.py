"""wzcapture: cache traces and the live-model metric from an MLA model.

  wzcapture.py capture  ...   cache-trace files (docs/cache-trace.md) from a
                              model run over real text: per layer the latent
                              c_kv, the position part after RoPE, positions
                              and absorbed queries
  wzcapture.py livekl   ...   the model run with every layer's cache stored
                              in each format (through libwzplan), against the
                              exact cache: next-token KL, top-1 agreement,
                              change in log-loss, per token (a JSON file)
  wzcapture.py report   ...   tables from livekl results (and `wzplan codec
                              measure --format csv` output on the same
                              windows): bootstrap intervals, iso-quality bits
                              by live KL, rank correlation of trace metrics
                              with live KL

Text comes from the project's corpus (corpus.py: documents split into train,
calibration and test by name) or from the user's own files (--text).  A
window is C consecutive tokens of the concatenated documents of one split
and category; window k is tokens [k C, (k + 1) C), so windows never share a
token and a test window holds test documents only.  See
docs/real-model.md.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def die(msg, code=2):
    print(f"wzcapture: {msg}", file=sys.stderr)
    sys.exit(code)


def progress(msg):
    print(f"wzcapture: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- text

def token_stream(args, tok, split, category):
    """Token ids of one split and category, documents joined by EOS."""
    eos = tok.token_to_id("<eos>")
    eos = 1 if eos is None else eos
    ids = []
    if args.text:
        for path in args.text:
            try:
                with open(path, encoding="utf-8") as f:
                    ids.extend(tok.encode(f.read()).ids)
            except (OSError, UnicodeDecodeError) as e:
                die(f"{path}: {e}")
            ids.append(eos)
        return np.asarray(ids, dtype=np.int64), [os.path.basename(p) for p in args.text]
    import corpus
    names = []
    for d in corpus.load(args.corpus, split=split, category=category):
        ids.extend(tok.encode(d["text"]).ids)
        ids.append(eos)
        names.append(d["name"])
    return np.asarray(ids, dtype=np.int64), names


def windows_of(stream, context, count, first=0):
    n = len(stream) // context
    if first + count > n:
        die(f"the text has {len(stream)} tokens: room for {n} windows of {context}, "
            f"{first + count} asked")
    return [stream[k * context:(k + 1) * context] for k in range(first, first + count)]


def tiny_tokenizer():
    """A byte-level tokenizer for the tiny test model (no training)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    vocab = {"<bos>": 0, "<eos>": 1}
    from tokenizers.pre_tokenizers import ByteLevel
    for i, ch in enumerate(sorted(ByteLevel.alphabet())):
        vocab[ch] = i + 2
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def load(args):
    import mla
    import torch
    torch.set_num_threads(args.threads)
    if args.tiny is not None:
        model = mla.load_model(tiny_seed=args.tiny)
        tok = tiny_tokenizer()
        name = f"tiny-random-seed{args.tiny}"
    else:
        if not args.model:
            die("--model DIR or --tiny SEED is required")
        model = mla.load_model(args.model)
        tpath = args.tokenizer or os.path.join(args.model, "tokenizer.json")
        if not os.path.exists(tpath):
            die(f"{tpath}: no tokenizer (give --tokenizer)")
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(tpath)
        name = args.model_name or os.path.basename(os.path.normpath(args.model))
    return model, tok, name


# ---------------------------------------------------------------- capture

def capture_window(model, ids, tokens, nq):
    """Runs ids exactly and returns the trace arrays of the last `tokens`."""
    import mla
    s = mla.shape_of(model)
    C = len(ids)
    T = min(tokens, C)
    first = C - T
    # queries spread over the window, so their contexts differ in length
    q_idx = np.unique(np.linspace(T // 8, T - 1, nq).astype(np.int64)) if nq else np.zeros(0, np.int64)
    rec = mla.QueryRecorder(model, first + q_idx) if nq else None
    cache = mla.CodecCache.new(model.config, None)
    _, cache = mla.run(model, ids, cache)
    if rec:
        rec.close()
    lat, rope = mla.cache_tensors(cache, s["L"])
    out = {"latent": lat[:, first:], "rope": rope[:, first:],
           "positions": np.arange(first, C, dtype=np.int64)}
    if nq:
        out["q_latent"] = np.stack([np.stack([rec.q_latent[(l, first + q)].numpy() for q in q_idx])
                                    for l in range(s["L"])])
        out["q_rope"] = np.stack([np.stack([rec.q_rope[(l, first + q)].numpy() for q in q_idx])
                                  for l in range(s["L"])])
        out["q_index"] = q_idx
    return out, s["scale"]


def write_trace(path, arrays, meta, dtype):
    import torch
    from safetensors.torch import save_file
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[dtype]
    tensors = {}
    for k in ("positions", "q_index"):
        if k in arrays:
            tensors[k] = torch.from_numpy(np.ascontiguousarray(arrays[k], dtype=np.int64))
    for k in ("latent", "rope", "q_latent", "q_rope"):
        if k in arrays:
            a = np.ascontiguousarray(arrays[k], dtype=np.float32)
            if not np.isfinite(a).all():
                die(f"{path}: {k} holds non-finite values (a capture bug)", 1)
            tensors[k] = torch.from_numpy(a).to(tdt)
    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata={k: str(v) for k, v in meta.items()})
    os.replace(tmp, path)


def cmd_capture(args):
    import mla
    model, tok, name = load(args)
    split = args.split
    stream, docs = token_stream(args, tok, split, args.category)
    wins = windows_of(stream, args.context, args.windows, args.first)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for k, ids in enumerate(wins, start=args.first):
        arrays, scale = capture_window(model, ids, args.tokens, args.queries)
        wname = f"{args.category}-{split}-c{args.context}-w{k}"
        src = (f"capture:wzcapture transformers {model.config.model_type} {name}; "
               f"text {'files' if args.text else 'corpus ' + os.path.basename(os.path.normpath(args.corpus))} "
               f"split {split} category {args.category} (document-level split, corpus.py); "
               f"window tokens [{k * args.context}, {(k + 1) * args.context}) of the split's stream, "
               f"last {arrays['latent'].shape[1]} kept; rope layout DeepSeek interleaved pairs")
        meta = {"format": "wz-cache-trace", "version": 1, "model": name, "softmax_scale": repr(scale),
                "split": split, "window": wname, "source": src, "category": args.category,
                "context": args.context, "rope_layout": "interleaved", **mla.rope_meta(model.config)}
        path = os.path.join(args.out, wname + ".safetensors")
        write_trace(path, arrays, meta, args.dtype)
        written.append(path)
        progress(f"wrote {path}")
    for p in written:
        print(p)


def cmd_trim(args):
    """The last --tokens tokens of a trace, its queries among them, in --dtype."""
    import torch
    from safetensors import safe_open
    try:
        with safe_open(args.input, "pt") as f:
            meta = dict(f.metadata() or {})
            t = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:  # safetensors raises its own error types
        die(f"{args.input}: {e}")
    for k in ("latent", "rope"):
        if k not in t:
            die(f"{args.input}: no {k} tensor")
    T = t["latent"].shape[1]
    keep = min(args.tokens, T)
    first = T - keep
    out = {"latent": t["latent"][:, first:].float().numpy(), "rope": t["rope"][:, first:].float().numpy()}
    pos = t["positions"] if "positions" in t else torch.arange(T)
    out["positions"] = pos[first:].numpy()
    if "q_index" in t:
        qi = t["q_index"]
        sel = (qi >= first).nonzero().flatten()
        if len(sel):
            out["q_index"] = (qi[sel] - first).numpy()
            out["q_latent"] = t["q_latent"][:, sel].float().numpy()
            out["q_rope"] = t["q_rope"][:, sel].float().numpy()
    meta["source"] = meta.get("source", "") + f"; trimmed to the last {keep} tokens"
    write_trace(args.out, out, meta, args.dtype)
    progress(f"wrote {args.out}: {keep} tokens, {len(out.get('q_index', []))} queries")


# ---------------------------------------------------------------- live KL

def score(logp_ref, logp, targets):
    """Per token: KL(ref || fmt), top-1 agreement, change in log-loss."""
    p = np.exp(logp_ref)
    kl = np.sum(p * (logp_ref - logp), axis=-1)
    kl = np.maximum(kl, 0.0)  # rounding can leave -1e-17
    top1 = (np.argmax(logp_ref, -1) == np.argmax(logp, -1)).astype(np.float64)
    idx = np.arange(len(targets))
    dll = -logp[idx, targets] + logp_ref[idx, targets]
    return kl, top1, dll


def live_window(model, ids, formats, profile, score_tokens, prefix, chunk):
    """Scores the last score_tokens of ids under each format; returns per
    format the per-token arrays and the bytes of the scored window."""
    import mla
    import torch
    s = mla.shape_of(model)
    C = len(ids)
    W = min(score_tokens, C - 1)
    targets = np.asarray(ids[C - W + 1:], dtype=np.int64)  # next tokens of positions C-W .. C-2
    ref_cache = mla.CodecCache.new(model.config, None)
    head = C - W
    if prefix == "exact":
        _, ref_cache = mla.run(model, ids[:head], ref_cache, chunk=chunk)
        pre_lat, pre_rope = mla.cache_tensors(ref_cache, s["L"])
        ref_logp, ref_cache = mla.run(model, ids[head:], ref_cache, chunk=chunk, keep_last=W, start=head)
    else:
        ref_logp, ref_cache = mla.run(model, ids, ref_cache, chunk=chunk, keep_last=W)
    ref_logp = ref_logp.numpy()[:-1]
    full_lat, full_rope = mla.cache_tensors(ref_cache, s["L"])
    results = {}
    for fmt in formats:
        rt = mla.codec_roundtrip(fmt, model, profile)
        cache = mla.CodecCache.new(model.config, rt)
        if prefix == "exact":
            # the prefix was prefilled exactly and is written in the format
            # (update() stores decode(encode(.)) of what it is given)
            _, frm = mla.rope_permutation(s["P"])
            for l in range(s["L"]):
                k = torch.from_numpy(np.ascontiguousarray(pre_lat[l])).view(1, 1, head, s["R"])
                v = torch.from_numpy(np.ascontiguousarray(pre_rope[l][:, frm])).view(1, 1, head, s["P"])
                cache.update(k, v, l)
            logp, _ = mla.run(model, ids[head:], cache, chunk=chunk, keep_last=W, start=head)
        else:
            logp, _ = mla.run(model, ids, cache, chunk=chunk, keep_last=W)
        logp = logp.numpy()[:-1]
        kl, top1, dll = score(ref_logp, logp, targets)
        nbytes = None
        if fmt != "exact":
            nbytes = rt.codec.window_bytes(full_lat[:, head:], full_rope[:, head:])
        results[fmt] = {"kl": kl, "top1": top1, "dlogloss": dll, "bytes": nbytes,
                        "values": s["L"] * W * (s["R"] + s["P"])}
    return results


def cmd_livekl(args):
    import wzplan
    model, tok, name = load(args)
    profile = wzplan.Profile.load(args.profile) if args.profile else None
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    for f in formats:
        if f != "exact":
            try:
                wzplan.canonical(f)
            except wzplan.WzError as e:
                die(str(e))
        if (f.startswith("wz") and not profile):
            die(f"format {f} needs --profile")
    out = {"model": name, "prefix": args.prefix, "context": args.context, "score_tokens": args.score,
           "split": args.split, "formats": formats, "profile": args.profile, "windows": []}
    for cat in args.categories.split(","):
        stream, docs = token_stream(args, tok, args.split, cat)
        wins = windows_of(stream, args.context, args.windows, args.first)
        for k, ids in enumerate(wins, start=args.first):
            progress(f"{cat} window {k}: {len(ids)} tokens, scoring the last {args.score}, "
                     f"{len(formats)} formats")
            res = live_window(model, ids, formats, profile, args.score, args.prefix, args.chunk)
            out["windows"].append({"category": cat, "window": f"{cat}-{args.split}-c{args.context}-w{k}",
                                   "results": {f: {kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv)
                                                   for kk, vv in r.items()} for f, r in res.items()}})
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, args.out)
    progress(f"wrote {args.out}")


# ---------------------------------------------------------------- tokens

def cmd_tokens(args):
    """Per layer and format: each token's squared error relative to the
    layer's mean token energy, its median, and the tokens far above it --
    the outliers a fixed-rate plan can code badly (real caches vary by token)."""
    import wzplan
    from safetensors.torch import load_file
    try:
        t = {k: v.float().numpy() for k, v in load_file(args.trace).items()}
        profile = wzplan.Profile.load(args.profile)
    except wzplan.WzError as e:
        die(str(e))
    except Exception as e:  # safetensors raises its own error types
        die(f"{args.trace}: {e}")
    for k in ("latent", "rope"):
        if k not in t:
            die(f"{args.trace}: no {k} tensor")
    lat, rope = t["latent"].astype(np.float32), t["rope"].astype(np.float32)
    pos = t.get("positions", np.arange(lat.shape[1]))
    L, T, R = lat.shape
    P = rope.shape[2]
    print("format\tlayer\tnmse\tmedian\tmax\toutliers\toutlier positions")
    for fmt in [f.strip() for f in args.formats.split(",") if f.strip()]:
        try:
            codec = wzplan.Codec(fmt, L, R, P, profile)
        except wzplan.WzError as e:
            die(str(e))
        for l in range(L):
            lo, ro = codec.roundtrip(l, lat[l], rope[l], pos)
            energy = (lat[l] ** 2).sum(1) + (rope[l] ** 2).sum(1)
            err = (((lo - lat[l]) ** 2).sum(1) + ((ro - rope[l]) ** 2).sum(1)) / energy.mean()
            med = float(np.median(err))
            far = np.nonzero(err > args.factor * med)[0]
            shown = ",".join(str(int(pos[i])) for i in far[:args.show])
            print(f"{fmt}\t{l}\t{err.mean():.3g}\t{med:.3g}\t{err.max():.3g}\t{len(far)}\t{shown}")


# ---------------------------------------------------------------- report

def boot_mean(x, nboot, rng):
    x = np.asarray(x)
    idx = rng.integers(0, len(x), size=(nboot, len(x)))
    m = x[idx].mean(axis=1)
    return float(x.mean()), float(np.percentile(m, 2.5)), float(np.percentile(m, 97.5))


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def iso_bits(rates, kls, ref):
    """Smallest wz rate whose mean KL is at most ref, interpolating log KL
    linearly in bits between grid rates; None when no rate reaches it,
    the lowest rate when all do."""
    order = np.argsort(rates)
    r = np.asarray(rates)[order]
    k = np.asarray(kls)[order]
    if k[0] <= ref:
        return float(r[0]), "at or below the lowest rate"
    for i in range(1, len(r)):
        if k[i] <= ref:
            a, b = math.log(max(k[i - 1], 1e-300)), math.log(max(k[i], 1e-300))
            t = (a - math.log(max(ref, 1e-300))) / (a - b) if a != b else 1.0
            return float(r[i - 1] + t * (r[i] - r[i - 1])), ""
    return None, "no rate reaches it"


def bits_of(fmt, res):
    if res.get("bytes") is None:
        return float("nan")
    return 8.0 * res["bytes"] / res["values"]


def finite_or_null(x):
    """JSON has no NaN: absent values are null (what `wzplan propose --live-kl` reads)."""
    if isinstance(x, dict):
        return {k: finite_or_null(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_or_null(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def cmd_report(args):
    with open(args.livekl) as f:
        data = json.load(f)
    measure = {}
    if args.measure:
        import csv
        for path in args.measure:
            with open(path) as f:
                for row in csv.DictReader(f):
                    measure[(row.get("window"), row.get("format"))] = row
    rng = np.random.default_rng(args.seed)
    formats = data["formats"]
    ref = args.reference
    cats = sorted(set(w["category"] for w in data["windows"]))
    lines = []
    summary = {"model": data["model"], "context": data["context"], "prefix": data["prefix"],
               "score_tokens": data["score_tokens"], "categories": {}}
    for cat in cats:
        ws = [w for w in data["windows"] if w["category"] == cat]
        pooled = {f: {k: np.concatenate([np.asarray(w["results"][f][k]) for w in ws])
                      for k in ("kl", "top1", "dlogloss")} for f in formats}
        bits = {f: float(np.mean([bits_of(f, w["results"][f]) for w in ws])) for f in formats}
        n = len(pooled[formats[0]]["kl"])
        lines.append(f"\n### {cat}: {len(ws)} windows, {n} scored tokens "
                     f"(context {data['context']}, prefix {data['prefix']})\n")
        lines.append("| format | bits/value | mean KL [95% CI] | KL vs " + ref + " [95% CI] | p99 KL | "
                     "top-1 agree | Δ log-loss | tokens better than " + ref + " | nmse | attention KL |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        rows = {}
        refkl = pooled[ref]["kl"] if ref in pooled else None
        nb = args.boot
        idx = rng.integers(0, n, size=(nb, n))
        for f in formats:
            kl = pooled[f]["kl"]
            m, lo, hi = boot_mean(kl, nb, rng)
            ratio = ratio_lo = ratio_hi = float("nan")
            better = float("nan")
            if refkl is not None and f not in (ref, "exact"):
                den = refkl[idx].mean(1)
                rs = kl[idx].mean(1) / np.where(den > 0, den, np.nan)
                ratio = float(kl.mean() / refkl.mean()) if refkl.mean() > 0 else float("nan")
                ratio_lo, ratio_hi = float(np.nanpercentile(rs, 2.5)), float(np.nanpercentile(rs, 97.5))
                better = float(np.mean(kl < refkl))
            nmse = akl = ""
            ms = [measure.get((w["window"], f)) for w in ws]
            if ms and all(ms):
                nmse = "%.3g" % np.mean([float(r["nmse"]) for r in ms])
                if all(r.get("kl") not in (None, "") for r in ms):
                    akl = "%.3g" % np.mean([float(r["kl"]) for r in ms])
            rows[f] = {"bits": bits[f], "kl": m, "kl_lo": lo, "kl_hi": hi, "ratio": ratio,
                       "ratio_lo": ratio_lo, "ratio_hi": ratio_hi, "p99": float(np.percentile(kl, 99)),
                       "top1": float(pooled[f]["top1"].mean()), "dlogloss": float(pooled[f]["dlogloss"].mean()),
                       "better": better, "nmse": nmse, "attn_kl": akl}
            bits_txt = "—" if math.isnan(bits[f]) else f"{bits[f]:.2f}"
            lines.append(f"| {f} | {bits_txt} | {m:.3g} [{lo:.3g}, {hi:.3g}] | "
                         + (f"{ratio:.2f}× [{ratio_lo:.2f}, {ratio_hi:.2f}]" if not math.isnan(ratio) else "—")
                         + f" | {rows[f]['p99']:.3g} | {rows[f]['top1']:.4f} | {rows[f]['dlogloss']:+.2e} | "
                         + (f"{100 * better:.0f}%" if not math.isnan(better) else "—")
                         + f" | {nmse or '—'} | {akl or '—'} |")
        # iso-quality bits by live KL, with a bootstrap interval
        wz = [f for f in formats if f.startswith("wz-")]
        iso = None
        if refkl is not None and len(wz) >= 2:
            rates = [bits[f] for f in wz]
            point, note = iso_bits(rates, [pooled[f]["kl"].mean() for f in wz], refkl.mean())
            samples = []
            for b in range(nb):
                ii = idx[b]
                v, _ = iso_bits(rates, [pooled[f]["kl"][ii].mean() for f in wz], refkl[ii].mean())
                samples.append(np.nan if v is None else v)
            samples = np.asarray(samples)
            ok = samples[~np.isnan(samples)]
            lo = float(np.percentile(ok, 2.5)) if len(ok) else float("nan")
            hi = float(np.percentile(ok, 97.5)) if len(ok) else float("nan")
            # Live KL need not fall with the rate (a plan can code a component
            # that carries some tokens coarsely): rates above the iso point
            # that still lose to the reference are named, not hidden.
            above = [f for f in wz if point and bits[f] > point and pooled[f]["kl"].mean() > refkl.mean()]
            iso = {"bits": point, "lo": lo, "hi": hi, "note": note,
                   "fewer_bits": (bits[ref] / point) if point else None,
                   "censored_share": float(np.mean(np.isnan(samples))),
                   "higher_rates_above_reference": above}
            if point:
                lines.append(f"\nIso-quality bits by live KL against {ref} ({bits[ref]:.2f} b/v): "
                             f"**{point:.2f}** [95% CI {lo:.2f}, {hi:.2f}] {note} → "
                             f"**{bits[ref] / point:.2f}× fewer bits** [{bits[ref] / hi:.2f}, {bits[ref] / lo:.2f}]")
                if above:
                    lines.append(f"\n**Not monotone:** higher rates whose live KL is still above {ref}'s: "
                                 + ", ".join(f"{f} ({pooled[f]['kl'].mean() / refkl.mean():.2f}×)" for f in above))
            else:
                lines.append(f"\nIso-quality bits by live KL against {ref}: {note} (grid {min(rates):.2f}–{max(rates):.2f})")
        # how well trace metrics predict live KL
        corr = {}
        for metric in ("nmse", "attn_kl"):
            xs = [(float(rows[f][metric]), rows[f]["kl"]) for f in formats if rows[f][metric] not in ("", None)]
            if len(xs) >= 3:
                corr[metric] = spearman([a for a, _ in xs], [b for _, b in xs])
        if corr:
            lines.append("\nSpearman rank correlation with live KL across formats and rates: "
                         + ", ".join(f"{k} {v:.2f}" for k, v in corr.items()))
        summary["categories"][cat] = {"windows": len(ws), "tokens": n, "rows": rows, "iso": iso,
                                      "spearman": corr}
    text = "\n".join(lines).lstrip() + "\n"
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
    else:
        sys.stdout.write(text)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(finite_or_null(summary), f, indent=1, allow_nan=False)
        os.replace(args.json + ".tmp", args.json)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="wzcapture", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def model_args(p):
        p.add_argument("--model", help="model folder (config.json, *.safetensors, tokenizer.json)")
        p.add_argument("--tokenizer", help="tokenizer.json (default MODEL/tokenizer.json)")
        p.add_argument("--model-name", help="name written into traces (default: the folder's name)")
        p.add_argument("--tiny", type=int, metavar="SEED", help="a tiny random-weight DeepSeek-V3 model (tests)")
        p.add_argument("--corpus", help="corpus folder (corpus.py --out)")
        p.add_argument("--text", nargs="+", help="your own text files instead of the corpus (one document each)")
        p.add_argument("--split", default="test", choices=["calibration", "test"])
        p.add_argument("--context", type=int, default=4096, help="tokens per window (default 4096)")
        p.add_argument("--windows", type=int, default=1)
        p.add_argument("--first", type=int, default=0, help="index of the first window")
        p.add_argument("--threads", type=int, default=os.cpu_count())

    p = sub.add_parser("capture", help="write cache-trace files")
    model_args(p)
    p.add_argument("--category", default="prose")
    p.add_argument("--tokens", type=int, default=1024, help="tokens kept per trace (the window's last)")
    p.add_argument("--queries", type=int, default=32, help="absorbed queries per trace")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.add_argument("--out", required=True, help="folder for the traces")
    p.set_defaults(fn=cmd_capture)

    p = sub.add_parser("trim", help="keep a trace's last tokens (and their queries), e.g. for samples")
    p.add_argument("input")
    p.add_argument("out")
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    p.set_defaults(fn=cmd_trim)

    p = sub.add_parser("livekl", help="live next-token KL per format")
    model_args(p)
    p.add_argument("--categories", default="prose,code")
    p.add_argument("--formats", required=True, help="e.g. fp8-mix,int4-g64,wz-5.44 ('exact' = no format)")
    p.add_argument("--profile", help="wz profile (from calibration windows only)")
    p.add_argument("--score", type=int, default=512, help="tokens scored at the end of each window")
    p.add_argument("--prefix", default="exact", choices=["exact", "live"],
                   help="exact: the prefix is prefilled exactly, then stored in the format (fast); "
                        "live: every token of the window runs through the format")
    p.add_argument("--chunk", type=int, default=1024, help="prefill chunk")
    p.add_argument("--out", required=True, help="results (JSON)")
    p.set_defaults(fn=cmd_livekl)

    p = sub.add_parser("tokens", help="per-token error by layer and format: the outlier tokens")
    p.add_argument("--trace", required=True, help="a cache-trace file")
    p.add_argument("--profile", required=True, help="the wz profile")
    p.add_argument("--formats", required=True, help="e.g. wz-4.97,wz-5.44")
    p.add_argument("--factor", type=float, default=10.0, help="outlier: error above FACTOR x the median")
    p.add_argument("--show", type=int, default=8, help="outlier positions printed per row")
    p.set_defaults(fn=cmd_tokens)

    p = sub.add_parser("report", help="tables from livekl results")
    p.add_argument("livekl", help="a livekl JSON file")
    p.add_argument("--measure", nargs="*", help="wzplan codec measure --format csv outputs on the same windows")
    p.add_argument("--reference", default="fp8-mix")
    p.add_argument("--boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", help="Markdown file (default standard output)")
    p.add_argument("--json", help="also a JSON summary")
    p.set_defaults(fn=cmd_report)
    args = ap.parse_args(argv)
    if args.cmd not in ("report", "trim", "tokens") and not args.text and not args.corpus:
        die("--corpus DIR or --text FILE... is required")
    args.fn(args)


if __name__ == "__main__":
    main()
