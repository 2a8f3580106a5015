"""``divisor``: what real models divide q·k by.

Plain arithmetic over a table of published configurations; it lives in the
worker so that every number a card shows comes from one place. Each entry
names its source: check it again before publishing a card that quotes it.
"""

import math
from dataclasses import dataclass
from typing import get_args

import torch

from app.demos.specs import divisor as spec
from app.demos.specs.divisor import DivisorParams, ModelName
from app.worker.demo import Demo, Outcome, Series


@dataclass(frozen=True)
class ModelScale:
    """How one model scales its attention scores.

    Attributes:
        divisor: the effective number q·k is divided by (1 / multiplier).
        head_dim: the query/key head dimension, where the source gives one.
        hidden: hidden size, where the source gives one.
        heads: query heads, where the source gives them.
        softcap: c in c·tanh(x/c) applied to the scores, if any.
        note: what is unusual about it.
        source: where to check it.
    """

    divisor: float
    head_dim: int | None
    hidden: int | None
    heads: int | None
    note: str
    source: str
    softcap: float | None = None


# DeepSeek-V3's YaRN attention factor: 0.1·mscale·ln(rope factor 40) + 1 with mscale 1
# (inference/model.py ModelArgs defaults; HF config.json rope_scaling factor 40, mscale_all_dim 1).
_YARN_MSCALE = 0.1 * math.log(40) + 1.0

MODELS: dict[ModelName, ModelScale] = {
    "transformer-base": ModelScale(
        8.0, 64, 512, 8, "The paper's own d_k: 512 / 8 heads.", "arXiv:1706.03762 §3.2.2"
    ),
    "bert-base": ModelScale(
        8.0,
        64,
        768,
        12,
        "768 / 12 heads; scores times 1/sqrt(64).",
        "google-research/bert modeling.py",
    ),
    "llama-3-70b": ModelScale(
        math.sqrt(128),
        128,
        8192,
        64,
        "GQA: 8 KV heads.",
        "meta-llama/llama3 Meta-Llama-3-70B/params.json",
    ),
    "mistral-7b": ModelScale(
        math.sqrt(128),
        128,
        4096,
        32,
        "scale = head_dim ** -0.5.",
        "mistralai/mistral-inference; Mistral 7B paper, table 1",
    ),
    "mixtral-8x7b": ModelScale(
        math.sqrt(128),
        128,
        4096,
        32,
        "Same attention as Mistral 7B.",
        "mistralai/mistral-inference",
    ),
    "mistral-nemo-12b": ModelScale(
        math.sqrt(128),
        128,
        5120,
        32,
        "head_dim 128, not hidden / heads = 160: read head_dim from the config.",
        "Mistral NeMo model config",
    ),
    "gemma-7b": ModelScale(
        16.0, 256, 3072, 16, "16 heads × 256 = 4096 ≠ hidden 3072.", "Gemma 1 model config"
    ),
    "gemma-2-9b": ModelScale(
        16.0,
        256,
        None,
        None,
        "head_dim 256 (first shipped as 224, corrected in July 2024); attention logit softcap 50.",
        "huggingface/transformers models/gemma2",
        softcap=50.0,
    ),
    "gemma-2-27b": ModelScale(
        12.0,
        128,
        4608,
        32,
        "query_pre_attn_scalar 144 = 4608 / 32, not head_dim; attention logit softcap 50.",
        "huggingface/transformers models/gemma2; AI-Hypercomputer/maxtext "
        "MaxText/utils/ckpt_conversion/utils/hf_model_configs.py (attn_logit_softcapping=50.0)",
        softcap=50.0,
    ),
    "gemma-3-27b": ModelScale(
        math.sqrt(168),
        128,
        5376,
        32,
        "query_pre_attn_scalar 168 = 5376 / 32, plus QK-norm.",
        "huggingface/transformers models/gemma3",
    ),
    "gemma-4": ModelScale(
        1.0,
        None,
        None,
        None,
        "QK-norm replaces the divisor: score scale 1.0 (new code: re-check).",
        "huggingface/transformers models/gemma4",
    ),
    "deepseek-v3": ModelScale(
        math.sqrt(192) / _YARN_MSCALE**2,
        192,
        None,
        None,
        "MLA: query-key head dim 128 + 64 (RoPE part) = 192. As released, the config sets YaRN "
        "rope_scaling (factor 40), and the reference code multiplies the scale by "
        f"mscale² = {_YARN_MSCALE**2:.3f} at every prompt length, not only for long context.",
        "deepseek-ai/DeepSeek-V3 inference/model.py (ModelArgs defaults max_seq_len 16384 > "
        "original_seq_len 4096, rope_factor 40, mscale 1; MLA.__init__); "
        "HF config.json rope_scaling",
    ),
    "deepseek-v3-no-yarn": ModelScale(
        math.sqrt(192),
        192,
        None,
        None,
        "The base scale 1/sqrt(128 + 64) alone: what a build without rope_scaling would use, "
        "not the released model.",
        "deepseek-ai/DeepSeek-V3 inference/model.py (softmax_scale = qk_head_dim ** -0.5)",
    ),
    "grok-1": ModelScale(
        math.sqrt(128),
        128,
        None,
        None,
        "Then caps scores with 30·tanh(x/30).",
        "xai-org/grok-1 model.py",
        softcap=30.0,
    ),
    "t5": ModelScale(
        1.0,
        None,
        None,
        None,
        "No divisor in the scores: folded into the query weights' initialisation.",
        "T5 (Raffel et al. 2020); Mesh TensorFlow",
    ),
}


def compute_divisor(params: DivisorParams, device: torch.device) -> Outcome:
    """Look the model up and derive its multiplier and the naive sqrt(head_dim)."""
    entry = MODELS[params.model]
    outputs = {"divisor": entry.divisor, "multiplier": 1 / entry.divisor}
    if entry.head_dim is not None:
        outputs["head_dim"] = float(entry.head_dim)
        outputs["sqrt_head_dim"] = math.sqrt(entry.head_dim)
    if entry.hidden is not None and entry.heads is not None:
        outputs["hidden_over_heads"] = entry.hidden / entry.heads
    if entry.softcap is not None:
        outputs["softcap"] = entry.softcap
    names = list(get_args(ModelName))
    return Outcome(
        outputs=outputs,
        series=[
            Series(
                name="divisor",
                kind="bar",
                x=names,
                y=[MODELS[name].divisor for name in names],
                x_label="model",
                y_label="effective divisor of q·k",
            )
        ],
        notes=[entry.note, f"Source: {entry.source}"],
    )


DIVISOR = Demo(spec=spec.DIVISOR, compute=compute_divisor)
