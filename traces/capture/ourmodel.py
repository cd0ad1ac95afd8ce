"""The project's own DeepSeek-V3-architecture model: its configuration and tokenizer.

Attention is DeepSeek-V3's exactly -- MLA with a low-rank query, a latent
cache of kv_lora_rank 512 after RMSNorm, a decoupled RoPE part of 64 values
cached after rotation, YaRN scaling configured as DeepSeek configures it
(beta_fast 32, beta_slow 1, mscale = mscale_all_dim = 1) -- in a model small
enough to train on two CPU cores.  A hidden size of 512 keeps the latent
full rank (kv_a_proj maps 512 -> 512 + 64).
"""
import json
import os

VOCAB_SIZE = 4096
TRAIN_CONTEXT = 1024          # tokens per training sequence
YARN_FACTOR = 32              # TRAIN_CONTEXT x 32 = 32,768 positions


def config_dict(tiny=False):
    """Keyword arguments for transformers.DeepseekV3Config.

    tiny=True gives the random-weight config the tests use (same cache shape
    rules, a few hundred kB of weights).
    """
    if tiny:
        d = dict(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=2, q_lora_rank=64, kv_lora_rank=64,
                 qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=16)
        original = 256
    else:
        d = dict(vocab_size=VOCAB_SIZE, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                 num_attention_heads=4, num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=512,
                 qk_rope_head_dim=64, qk_nope_head_dim=64, v_head_dim=64)
        original = TRAIN_CONTEXT
    d.update(
        # dense MLP in every layer: no MoE routing to learn in a few hours
        first_k_dense_replace=d["num_hidden_layers"], n_routed_experts=1, n_shared_experts=1,
        num_experts_per_tok=1, moe_intermediate_size=d["intermediate_size"], n_group=1, topk_group=1,
        max_position_embeddings=original * YARN_FACTOR, rope_theta=10000.0,
        rope_scaling={"type": "yarn", "rope_type": "yarn", "factor": float(YARN_FACTOR),
                      "original_max_position_embeddings": original, "beta_fast": 32.0,
                      "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0},
        rope_interleave=True, rms_norm_eps=1e-6, tie_word_embeddings=False,
        attention_bias=False, attention_dropout=0.0, initializer_range=0.02,
        bos_token_id=0, eos_token_id=1, pad_token_id=1,
    )
    return d


def make_config(tiny=False):
    from transformers import DeepseekV3Config
    cfg = DeepseekV3Config(**config_dict(tiny))
    cfg._attn_implementation = "eager"
    return cfg


def train_tokenizer(texts, path, vocab_size=VOCAB_SIZE):
    """Byte-level BPE trained on the training split only; written to path."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<bos>", "<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tmp = path + ".tmp"
    tok.save(tmp)
    os.replace(tmp, path)
    return tok


def load_tokenizer(path):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(path)
