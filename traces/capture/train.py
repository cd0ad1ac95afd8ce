"""Trains the project's own DeepSeek-V3-architecture model on the real-text corpus.

One script, fixed seed: builds the corpus from Debian packages (corpus.py),
trains a byte-level BPE tokenizer on the training split, then trains the
model (ourmodel.py) for --steps steps of --batch sequences of 1,024 tokens,
sampled from training documents only.  It checkpoints every --checkpoint-min
minutes and resumes from the checkpoint, so training can be continued by a
later run; --max-minutes, SIGTERM or SIGINT stops cleanly (checkpoint and
model files written) before the end.
Validation loss is measured on the test split's documents, which neither
training nor `wzplan codec prepare` reads.  At the end it writes
model.safetensors (bf16), config.json, tokenizer.json and summary.json.
"""
import argparse
import json
import math
import os
import signal
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import ourmodel  # noqa: E402

SEED = 20261201


def log(msg):
    print(f"train: {msg}", file=sys.stderr, flush=True)


def token_stream(tok, docs, eos):
    ids = []
    for d in docs:
        ids.extend(tok.encode(d["text"]).ids)
        ids.append(eos)
    return np.asarray(ids, dtype=np.uint16)


def prepare_data(out, corpus_dir):
    if not os.path.exists(os.path.join(corpus_dir, "corpus.jsonl")):
        log(f"building the corpus in {corpus_dir}")
        corpus.build(corpus_dir)
    tok_path = os.path.join(out, "tokenizer.json")
    if not os.path.exists(tok_path):
        log("training the tokenizer on the training split")
        ourmodel.train_tokenizer((d["text"] for d in corpus.load(corpus_dir, split="train")), tok_path)
    tok = ourmodel.load_tokenizer(tok_path)
    streams = {}
    for split in ("train", "test"):
        path = os.path.join(out, f"tokens-{split}.npy")
        if not os.path.exists(path):
            log(f"tokenizing the {split} split")
            arr = token_stream(tok, corpus.load(corpus_dir, split=split), eos=1)
            np.save(path + ".tmp.npy", arr)
            os.replace(path + ".tmp.npy", path)
        streams[split] = np.load(path)
    return tok, streams


def batch_at(stream, rng, batch, ctx):
    starts = rng.integers(0, len(stream) - ctx - 1, size=batch)
    x = np.stack([stream[s:s + ctx + 1] for s in starts]).astype(np.int64)
    return torch.from_numpy(x)


def lm_loss(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(input_ids=x[:, :-1], use_cache=False).logits
    return torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))


@torch.no_grad()
def val_loss(model, stream, ctx, n_seq=16):
    rng = np.random.default_rng(SEED + 1)
    model.eval()
    losses = [lm_loss(model, batch_at(stream, rng, 1, ctx)).item() for _ in range(n_seq)]
    model.train()
    return float(np.mean(losses))


def lr_at(step, steps, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    p = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))


def save_final(model, cfg, out, summary):
    import shutil
    from safetensors.torch import save_file
    tok = os.path.join(summary["_dir"], "tokenizer.json")
    if os.path.abspath(out) != os.path.abspath(summary["_dir"]):
        shutil.copyfile(tok, os.path.join(out, "tokenizer.json"))
    summary = {k: v for k, v in summary.items() if k != "_dir"}
    state = {k: v.detach().to(torch.bfloat16).contiguous() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(out, "model.safetensors.tmp"), metadata={"format": "pt"})
    os.replace(os.path.join(out, "model.safetensors.tmp"), os.path.join(out, "model.safetensors"))
    cfg.to_json_file(os.path.join(out, "config.json"))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for checkpoints and the trained model")
    ap.add_argument("--corpus", help="corpus folder (default OUT/corpus)")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--max-minutes", type=float, default=1e9, help="stop (with a checkpoint) after this long")
    ap.add_argument("--checkpoint-min", type=float, default=10.0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--export-dir", help="with --export-only: where to write (default OUT)")
    ap.add_argument("--export-only", action="store_true",
                    help="write the model files from the last checkpoint and stop (training goes on later)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    args.export_dir = args.export_dir or args.out
    os.makedirs(args.export_dir, exist_ok=True)
    tok, streams = prepare_data(args.out, args.corpus or os.path.join(args.out, "corpus"))
    log(f"train {len(streams['train'])} tokens, test {len(streams['test'])} tokens")

    torch.manual_seed(SEED)
    from transformers import DeepseekV3ForCausalLM
    cfg = ourmodel.make_config()
    model = DeepseekV3ForCausalLM(cfg)
    log(f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    step, history = 0, []
    rng = np.random.default_rng(SEED)
    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path, weights_only=False)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, history = ck["step"], ck["history"]
        rng.bit_generator.state = ck["rng"]
        log(f"resumed at step {step}")

    def checkpoint():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "history": history,
                    "rng": rng.bit_generator.state, "args": vars(args)}, ckpt_path + ".tmp")
        os.replace(ckpt_path + ".tmp", ckpt_path)

    # SIGTERM or SIGINT ends training after the current step, with a
    # checkpoint and the model files written, so a stopped run loses nothing.
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))

    ctx = ourmodel.TRAIN_CONTEXT
    t0 = last_ckpt = time.time()
    model.train()
    while step < args.steps and not args.export_only:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        loss = lm_loss(model, batch_at(streams["train"], rng, args.batch, ctx))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 10 == 0:
            el = time.time() - t0
            log(f"step {step}/{args.steps} loss {loss.item():.3f} "
                f"{step * args.batch * ctx / 1e6:.2f}M tokens seen")
        if step % args.eval_every == 0 or step == args.steps:
            v = val_loss(model, streams["test"], ctx)
            history.append({"step": step, "tokens": step * args.batch * ctx, "train_loss": loss.item(), "val_loss": v})
            log(f"step {step} validation loss {v:.3f}")
        if time.time() - last_ckpt > args.checkpoint_min * 60:
            checkpoint()
            last_ckpt = time.time()
        if time.time() - t0 > args.max_minutes * 60 or stop:
            break
    if not args.export_only:
        checkpoint()
    v = val_loss(model, streams["test"], ctx)
    unigram = np.bincount(streams["train"], minlength=cfg.vocab_size) + 1.0
    p = unigram / unigram.sum()
    test_counts = np.bincount(streams["test"], minlength=cfg.vocab_size)
    summary = {"steps": step, "tokens_seen": step * args.batch * ctx, "val_loss_nats": v,
               "unigram_cross_entropy_nats": float(-(test_counts * np.log(p)).sum() / test_counts.sum()),
               "parameters": sum(p_.numel() for p_ in model.parameters()), "seed": SEED,
               "train_tokens": int(len(streams["train"])), "test_tokens": int(len(streams["test"])),
               "history": history, "finished": step >= args.steps, "_dir": args.out}
    save_final(model, cfg, args.out if not args.export_only else args.export_dir, summary)
    log(f"done at step {step}: validation loss {v:.3f} nats on held-out test documents")


if __name__ == "__main__":
    main()
