"""Builds the real-text corpus the project's own MLA model is trained and measured on.

Documents come from Debian packages (no downloads): prose from the Linux
kernel's and Python's documentation (packages linux-doc, python3-doc), code
from the Python standard library's sources.  Each document goes to exactly
one split -- train, calibration or test -- by a hash of its name, never by
token, so a test document's text is never seen by training or by `wzplan
codec prepare`.  The split is written next to the corpus (split.json).
"""
import argparse
import gzip
import hashlib
import json
import os
import sys

PROSE_ROOTS = [
    ("linux-doc", "/usr/share/doc/linux-doc/Documentation", (".rst", ".rst.gz", ".txt", ".txt.gz")),
    ("python3-doc", "/usr/share/doc/python3-doc/html/_sources", (".rst.txt",)),
]
CODE_ROOTS = [
    ("python3-stdlib", "/usr/lib/python3.11", (".py",)),
]
# Share of documents in each split, in per mille of the name hash.
SPLIT_PER_MILLE = {"calibration": 50, "test": 50}
MAX_DOC_BYTES = 400_000


def split_of(name):
    """Split for a document, from the SHA-256 of its name (stable everywhere)."""
    h = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little") % 1000
    if h < SPLIT_PER_MILLE["test"]:
        return "test"
    if h < SPLIT_PER_MILLE["test"] + SPLIT_PER_MILLE["calibration"]:
        return "calibration"
    return "train"


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read(MAX_DOC_BYTES + 1)
    if len(raw) > MAX_DOC_BYTES:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def iter_documents(roots, category):
    for package, root, suffixes in roots:
        if not os.path.isdir(root):
            raise SystemExit(f"corpus: {root} is missing (install the Debian package {package})")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            if "site-packages" in dirnames:
                dirnames.remove("site-packages")
            for fn in sorted(filenames):
                if not fn.endswith(suffixes):
                    continue
                path = os.path.join(dirpath, fn)
                text = read_text(path)
                if not text or len(text) < 200:
                    continue
                name = f"{package}:{os.path.relpath(path, root)}"
                yield {"name": name, "category": category, "split": split_of(name), "text": text}


def build(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    docs = list(iter_documents(PROSE_ROOTS, "prose")) + list(iter_documents(CODE_ROOTS, "code"))
    tmp = os.path.join(out_dir, "corpus.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    os.replace(tmp, os.path.join(out_dir, "corpus.jsonl"))
    summary = {}
    for d in docs:
        key = f"{d['category']}/{d['split']}"
        s = summary.setdefault(key, {"documents": 0, "bytes": 0})
        s["documents"] += 1
        s["bytes"] += len(d["text"].encode())
    split = {
        "rule": "sha256(name)[0:4] little-endian mod 1000: < %d test, < %d calibration, else train"
        % (SPLIT_PER_MILLE["test"], SPLIT_PER_MILLE["test"] + SPLIT_PER_MILLE["calibration"]),
        "sources": [r[0] for r in PROSE_ROOTS + CODE_ROOTS],
        "summary": summary,
        "documents": {d["name"]: d["split"] for d in docs},
    }
    with open(os.path.join(out_dir, "split.json"), "w") as f:
        json.dump(split, f, indent=1, sort_keys=True)
    return summary


def load(out_dir, split=None, category=None):
    with open(os.path.join(out_dir, "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if (split is None or d["split"] == split) and (category is None or d["category"] == category):
                yield d


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for corpus.jsonl and split.json")
    args = ap.parse_args()
    summary = build(args.out)
    for k in sorted(summary):
        print(f"{k:20s} {summary[k]['documents']:6d} documents {summary[k]['bytes'] / 1e6:8.2f} MB", file=sys.stderr)
