"""MLA models from Hugging Face transformers, seen the way a serving stack
sees them: the latent cache, the position part, absorbed queries, and a
cache whose every stored token goes through a cache format.

Works with any DeepSeek-V2/V3 attention in transformers >= 5.24, where the
cache holds c_kv (after kv_a_layernorm) as keys and k_pe (after RoPE) as
values.  transformers keeps the position part de-interleaved (rotation pair
j is channels j and j + P/2); traces and codecs use DeepSeek's reference
layout, interleaved pairs (2j, 2j + 1), so every capture and every codec
call goes through ROPE_TO_DEEPSEEK / ROPE_FROM_DEEPSEEK.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def rope_permutation(P):
    """Index arrays: deepseek = stored[..., to]; stored = deepseek[..., frm]."""
    to = np.empty(P, dtype=np.int64)
    to[0::2] = np.arange(P // 2)
    to[1::2] = np.arange(P // 2) + P // 2
    frm = np.argsort(to)
    return torch.from_numpy(to), torch.from_numpy(frm)


def load_model(path=None, tiny_seed=None):
    """A model from a folder (config.json + safetensors weights), or with
    tiny_seed a tiny random-weight DeepSeek-V3 config for tests."""
    from transformers import DeepseekV3ForCausalLM, AutoModelForCausalLM
    if tiny_seed is not None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ourmodel
        torch.manual_seed(tiny_seed)
        model = DeepseekV3ForCausalLM(ourmodel.make_config(tiny=True))
    else:
        model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager",
                                                     dtype=torch.float32, local_files_only=True)
    model.config._attn_implementation = "eager"
    model.eval()
    return model


def attention_modules(model):
    if getattr(model.config, "model_type", "") == "deepseek_v4":
        # docs/cache-anatomy.md: V4 caches one shared 448 + 64-value K=V
        # entry per window token and per compressed group, written by each
        # layer's compressor (and an indexer key per group on c4a layers),
        # not a kv_a_layernorm latent a kv_b_proj expands.
        raise ValueError("DeepSeek-V4 (model_type deepseek_v4) is not captured: its cache "
                         "is the window's and the compressor's shared K=V entries "
                         "(attn.compressor, attn.indexer), and this tool hooks only "
                         "DeepSeek-V2/V3 latents (kv_a_layernorm / kv_b_proj); synthetic "
                         "V4-shaped entries: wzplan trace synth-cache --family v4-c4 or v4-c128")
    mods = [layer.self_attn for layer in model.model.layers]
    for m in mods:
        if not hasattr(m, "kv_a_layernorm") or not hasattr(m, "kv_b_proj"):
            raise ValueError("not an MLA model: attention has no kv_a_layernorm / kv_b_proj")
    return mods


def rope_meta(config):
    """The trace metadata keys rope_theta and rope_yarn (docs/cache-trace.md)
    from a model's configuration: how it rotates the position part.  {}
    where it says no base, or uses a RoPE other than plain or YaRN (whose
    frequencies wzplan does not compute)."""
    p = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
    theta = p.get("rope_theta", getattr(config, "rope_theta", None))
    kind = p.get("rope_type", p.get("type", "default"))
    if not theta or kind not in ("default", "yarn"):
        return {}
    out = {"rope_theta": repr(float(theta))}
    if kind == "yarn":
        out["rope_yarn"] = ",".join(repr(float(x)) for x in (
            p["factor"], p["original_max_position_embeddings"], p.get("beta_fast", 32.0),
            p.get("beta_slow", 1.0)))
    return out


def shape_of(model):
    a = attention_modules(model)[0]
    return dict(L=len(model.model.layers), R=a.kv_lora_rank, P=a.qk_rope_head_dim,
                H=a.num_heads, nope=a.qk_nope_head_dim, scale=float(a.scaling))


class CodecCache:
    """Builds a transformers DynamicCache whose update() stores every new
    token's (c_kv, k_pe) as decode(encode(.)) in a format, so attention reads
    what a cache in that format holds.  roundtrip(layer, latent[n,R],
    rope[n,P], positions[n]) works in DeepSeek's layout; None stores tokens
    exactly.  The cache fills from position 0 in order, so the new tokens'
    positions follow the layer's cached length (a profile that undoes RoPE
    codes each token at its own position)."""

    @staticmethod
    def new(config, roundtrip):
        from transformers import DynamicCache

        class _Cache(DynamicCache):
            def update(self, key_states, value_states, layer_idx, *args, **kwargs):
                if roundtrip is not None:
                    start = self.get_seq_length(layer_idx) if layer_idx < len(self.layers) else 0
                    key_states, value_states = apply_roundtrip(roundtrip, layer_idx, key_states,
                                                               value_states, start)
                return super().update(key_states, value_states, layer_idx, *args, **kwargs)

        return _Cache(config=config)


def apply_roundtrip(roundtrip, layer, keys, values, start=0):
    """keys [B,1,n,R] (c_kv) and values [B,1,n,P] (k_pe, transformers layout)
    of the tokens at positions start..start+n-1."""
    to, frm = rope_permutation(values.shape[-1])
    out_k, out_v = torch.empty_like(keys), torch.empty_like(values)
    positions = np.arange(start, start + keys.shape[2], dtype=np.int64)
    for b in range(keys.shape[0]):
        lat = keys[b, 0].detach().float().numpy()
        rp = values[b, 0][:, to].detach().float().numpy()
        lo, ro = roundtrip(layer, lat, rp, positions)
        out_k[b, 0] = torch.from_numpy(lo).to(keys.dtype)
        out_v[b, 0] = torch.from_numpy(ro).to(values.dtype)[:, frm]
    return out_k, out_v


def codec_roundtrip(fmt, model, profile=None):
    """A roundtrip function for a wzplan format name; "exact" stores tokens
    unchanged (the harness's own zero: its KL must be exactly 0)."""
    if fmt == "exact":
        return lambda layer, lat, rp, positions=None: (lat, rp)
    import wzplan
    s = shape_of(model)
    codec = wzplan.Codec(fmt, s["L"], s["R"], s["P"], profile)

    def rt(layer, lat, rp, positions=None):
        return codec.roundtrip(layer, lat, rp, positions)
    rt.codec = codec
    return rt


@torch.no_grad()
def run(model, ids, cache, chunk=1024, keep_last=0, start=0):
    """Chunked prefill of ids (1-D) at positions start.. through cache (which
    holds the first `start` tokens); returns log-probabilities [keep_last, V]
    of the last keep_last positions (float64) and the cache."""
    ids = torch.as_tensor(ids, dtype=torch.long).view(1, -1)
    kept = []
    T = ids.shape[1]
    for s in range(0, T, chunk):
        e = min(T, s + chunk)
        out = model(input_ids=ids[:, s:e], cache=cache, use_cache=True,
                    position_ids=torch.arange(start + s, start + e).view(1, -1))
        if keep_last and e > T - keep_last:
            lo = max(s, T - keep_last) - s
            kept.append(torch.log_softmax(out.logits[0, lo:].double(), dim=-1))
    return (torch.cat(kept) if kept else None), cache


class QueryRecorder:
    """Forward pre-hooks on every attention that record absorbed queries at
    chosen absolute positions: q_latent = q_nope . W_UK (W_UK from
    kv_b_proj), q_rope after RoPE, both in DeepSeek's layout."""

    def __init__(self, model, positions):
        self.positions = set(int(p) for p in positions)
        self.mods = attention_modules(model)
        self.q_latent = {}  # (layer, position) -> [H, R]
        self.q_rope = {}
        self.handles = [m.register_forward_pre_hook(self._hook(i), with_kwargs=True)
                        for i, m in enumerate(self.mods)]

    def _hook(self, layer):
        def hook(mod, args, kwargs):
            h = kwargs.get("hidden_states", args[0] if args else None)
            cos, sin = kwargs["position_embeddings"]
            pos_ids = kwargs.get("position_ids")
            self._record(layer, mod, h, cos, sin, pos_ids)
        return hook

    def _record(self, layer, mod, h, cos, sin, pos_ids):
        positions = pos_ids[0].tolist()
        want = [(i, p) for i, p in enumerate(positions) if p in self.positions]
        if not want:
            return
        q_lat, q_rope = absorbed_queries(mod, h, cos, sin)
        for i, p in want:
            self.q_latent[(layer, p)] = q_lat[i]
            self.q_rope[(layer, p)] = q_rope[i]

    def close(self):
        for h in self.handles:
            h.remove()


@torch.no_grad()
def absorbed_queries(mod, h, cos, sin):
    """For hidden states h [1, n, D]: (q_latent [n, H, R], q_rope [n, H, P])."""
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as mdv3
    B, n, _ = h.shape
    if mod.q_lora_rank is None:
        q = mod.q_proj(h)
    else:
        q = mod.q_b_proj(mod.q_a_layernorm(mod.q_a_proj(h)))
    q = q.view(B, n, mod.num_heads, mod.qk_head_dim).transpose(1, 2)
    q_nope, q_pe = torch.split(q, [mod.qk_nope_head_dim, mod.qk_rope_head_dim], dim=-1)
    dummy = torch.zeros(B, 1, n, mod.qk_rope_head_dim, dtype=q_pe.dtype)
    if mod.config.rope_interleave:
        q_pe, _ = mdv3.apply_rotary_pos_emb_interleave(q_pe, dummy, cos, sin)
    else:
        q_pe, _ = mdv3.apply_rotary_pos_emb(q_pe, dummy, cos, sin)
    W = mod.kv_b_proj.weight.view(mod.num_heads, mod.qk_nope_head_dim + mod.v_head_dim, mod.kv_lora_rank)
    w_uk = W[:, :mod.qk_nope_head_dim, :]                      # [H, nope, R]
    q_lat = torch.einsum("hnd,hdr->nhr", q_nope[0].float(), w_uk.float())
    to, _ = rope_permutation(mod.qk_rope_head_dim)
    q_rope = q_pe[0].transpose(0, 1)[..., to].float()           # [n, H, P]
    return q_lat, q_rope


def cache_tensors(cache, L):
    """(latent [L, T, R], rope [L, T, P]) float32 numpy, DeepSeek layout."""
    lats, ropes = [], []
    for i in range(L):
        layer = cache.layers[i]
        k, v = layer.keys, layer.values
        to, _ = rope_permutation(v.shape[-1])
        lats.append(k[0, 0].float().numpy())
        ropes.append(v[0, 0][:, to].float().numpy())
    return np.stack(lats), np.stack(ropes)
