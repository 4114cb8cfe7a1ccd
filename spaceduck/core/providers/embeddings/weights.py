"""The local MiniLM's weights as loaded (local.load_model): what the numpy forward pass
(local.py) and the ONNX Runtime short path (onnx_short.py) both read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer


@dataclass(frozen=True)
class Layer:
    # Dense weights are stored transposed ((in, out)) so the forward pass is x @ w;
    # query, key and value are fused into one (384, 1152) matmul, with the
    # 1/sqrt(head_dim) attention scale folded into the query part.
    qkv_w: np.ndarray
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray
    # The same four weights again as column blocks for forward_short (+42 MB in all);
    # the down projection's also cut in two along its input (see SHORT_TOKENS).
    qkv_blocks: np.ndarray
    out_blocks: np.ndarray
    up_blocks: np.ndarray
    down_blocks: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Model:
    tokenizer: Tokenizer
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    layers: tuple[Layer, ...]
    heads: int
    eps: float
