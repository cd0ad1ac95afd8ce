"""wzplan's FP8 DeepSeek cache formats against the serving stacks' own
quantizers, byte for byte, on every token of the real cache windows.

The stacks' quantizers are restated here with the torch operations their
published code uses, so that the e4m3 rounding, the scale arithmetic and the
layout are torch's and the stacks', not wzplan's C:

- fp8-ds-mla: vLLM's concat_and_cache_ds_mla_kernel (csrc/cache_kernels.cu,
  read at 37cb21c1695d): per 128-value tile, scale = max(max|x| / 448,
  FLT_MIN) in fp32, each value x / scale converted to e4m3 (round to nearest
  even, saturating); layout [512 e4m3][4 fp32 scales][64 bf16] = 656 B.
- fp8-ds-mla-ue8m0: FlashMLA's tests/quant.py quantize_k_cache,
  V32_FP8Sparse (read at 520fec6a and 9241ae3, unchanged between them):
  scale = 2^ceil(log2(max(max|x| / 448, 1e-4))) computed in float32 by
  torch, x.float() / scale -> float8_e4m3fn; same layout.
- fp8-ds-mla-v4: the same file, MODEL1_FP8Sparse: 64-value tiles of the
  448-value latent, the same power-of-two scale stored as float8_e8m0fnu;
  a token's bytes are [448 e4m3][64 bf16][7 e8m0][1 pad] = 584 B.

The inputs are bf16, as a serving stack's cache writes see them: the eight
real windows (4 layers x 512 tokens each: 16,384 token records), the same
values scaled by 2^-8 (shallow layers of real models sit two orders of
magnitude below the deep ones, where the 1e-4 floor of the power-of-two
scale acts), and edge tiles (all zero; a maximum just above and at a power
of two times 448; e4m3's subnormals).
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

import wzplan  # noqa: E402
from tap import ok, done  # noqa: E402

FLT_MIN = float(np.finfo(np.float32).tiny)


def as_bytes(t):
    return t.contiguous().view(torch.uint8).numpy()


def vllm_fp8_ds_mla(lat, rope):
    """[n, 512] and [n, 64] bf16 -> [n, 656] bytes."""
    n = lat.shape[0]
    x = lat.float().view(n, 4, 128)
    scale = torch.clamp_min(x.abs().amax(dim=-1) / 448.0, FLT_MIN)  # fp32
    q = (x / scale.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return np.concatenate([as_bytes(q.view(n, 512)), as_bytes(scale), as_bytes(rope)], axis=1)


def ue8m0(scale_inv):
    # FlashMLA's _cast_scale_inv_to_ue8m0, as published
    return torch.pow(2, torch.clamp_min(scale_inv, 1e-4).log2().ceil()).to(torch.float32)


def flashmla_v32_ue8m0(lat, rope):
    n = lat.shape[0]
    x = lat.view(n, 4, 128)
    s = ue8m0(x.abs().amax(dim=-1).float() / 448.0)
    q = (x.float() / s.unsqueeze(-1)).to(torch.float8_e4m3fn)
    return np.concatenate([as_bytes(q.view(n, 512)), as_bytes(s), as_bytes(rope)], axis=1)


def flashmla_model1(lat, rope):
    """[n, 448] and [n, 64] bf16 -> [n, 584] bytes."""
    n = lat.shape[0]
    x = lat.view(n, 7, 64)
    s = ue8m0(x.abs().amax(dim=-1).float() / 448.0)
    q = (x.float() / s.unsqueeze(-1)).to(torch.float8_e4m3fn)
    pad = np.zeros((n, 1), dtype=np.uint8)
    return np.concatenate([as_bytes(q.view(n, 448)), as_bytes(rope),
                           as_bytes(s.to(torch.float8_e8m0fnu)), pad], axis=1)


def windows():
    root = os.environ.get("top_srcdir", os.path.join(HERE, "..", ".."))
    for path in sorted(glob.glob(os.path.join(root, "data", "real", "*.safetensors"))):
        d = load_file(path)
        yield os.path.basename(path), d["latent"], d["rope"]


def edge_tiles(R, tile):
    """Tiles a quantizer's arithmetic can get wrong: zero, a maximum of 448
    times a power of two and one ulp above it, subnormal-sized values."""
    rows = []
    g = torch.Generator().manual_seed(5)
    for k in range(-20, 4):
        for bump in (0, 1):
            t = torch.randn(R, generator=g) * 2.0 ** k
            m = torch.tensor(448.0 * 2.0 ** k, dtype=torch.float32)
            if bump:  # the next bf16 above it
                m = (m.bfloat16().view(torch.int16) + 1).view(torch.bfloat16).float()
            t = t.clamp(-m, m)
            t[0] = m
            rows.append(t)
    z = torch.zeros(R)
    z[tile:] = torch.randn(R - tile, generator=g) * 1e-6  # first tile all zero
    rows.append(z)
    return torch.stack(rows).bfloat16()


def compare(fmt, R, P, ref, name):
    total = same = 0
    first_bad = ""
    for wname, lat, rope in windows():
        L, T = lat.shape[0], lat.shape[1]
        lat = lat[..., :R]
        for scale_name, k in (("", 0), (" x 2^-8", -8)):
            codec = wzplan.Codec(fmt, L, R, P)
            for layer in range(L):
                x = (lat[layer].float() * 2.0 ** k).bfloat16()
                r = (rope[layer].float() * 2.0 ** k).bfloat16()
                want = ref(x, r)
                got = codec.encode(layer, x.float().numpy(), r.float().numpy())
                eq = np.all(want == got, axis=1)
                total += T
                same += int(eq.sum())
                if not first_bad and not eq.all():
                    i = int(np.argmin(eq))
                    j = int(np.argmax(want[i] != got[i]))
                    first_bad = (f"{wname}{scale_name} layer {layer} token {i} byte {j}: "
                                 f"stack {want[i][j]:#04x}, wzplan {got[i][j]:#04x}")
            codec.close()
    ok(same == total and total >= 7168, f"{name}: {same} of {total} real token records byte-identical",
       first_bad)
    e = edge_tiles(R, 128 if R == 512 else 64)
    r = torch.zeros(e.shape[0], P).bfloat16()
    codec = wzplan.Codec(fmt, 1, R, P)
    want, got = ref(e, r), codec.encode(0, e.float().numpy(), r.float().numpy())
    eq = np.all(want == got, axis=1)
    bad = [int(i) for i in np.nonzero(~eq)[0]]
    ok(not bad, f"{name}: {int(eq.sum())} of {len(eq)} edge tiles byte-identical",
       f"rows differing: {bad[:10]}")
    codec.close()


ok(wzplan.record_bytes("fp8-ds-mla", 512, 64) == 656 and
   wzplan.record_bytes("fp8-ds-mla-ue8m0", 512, 64) == 656 and
   wzplan.record_bytes("fp8-ds-mla-v4", 448, 64) == 584, "record sizes 656, 656 and 584 bytes")
compare("fp8-ds-mla", 512, 64, vllm_fp8_ds_mla, "fp8-ds-mla against vLLM's kernel")
compare("fp8-ds-mla-ue8m0", 512, 64, flashmla_v32_ue8m0, "fp8-ds-mla-ue8m0 against FlashMLA's V32 quantizer")
compare("fp8-ds-mla-v4", 448, 64, flashmla_model1, "fp8-ds-mla-v4 against FlashMLA's MODEL1 quantizer")
done()
