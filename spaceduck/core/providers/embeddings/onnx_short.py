"""A short question's encoder layers through ONNX Runtime, on the calling thread.

Optional (``pip install 'spaceduck[onnx]'``): without onnxruntime and onnx the numpy
short path runs. The graph is built here from the weights local.py loaded (no file,
no download): the same maths as forward_short, exact-erf GELU, float32 throughout;
the reference vectors stay at cosine 0.9999999.

Measured as question/scan p95 (the 100k exact scan, one BLAS thread), all timed
alternately in one run: numpy's short path / this on one thread / this on one or two
threads (whichever had been faster over the last questions) took 0.67x / 0.58x /
1.18x with other jobs on the machine, and 0.72x / 0.61x / 0.56x with the CPU favoured
(chrt). A second thread gains little when a core is free and doubles p95 when it is
not (the run waits for a pool thread that gets no core): the trade spaceduck/core/blas.py
makes for BLAS threads. So one thread.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spaceduck.core.providers.embeddings.weights import Layer, Model

OPSET = 18  # LayerNormalization is a standard operator from opset 17 on
IR_VERSION = 9  # what onnxruntime >= 1.15 reads


def available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


class _Graph:
    """Nodes and initializers of the encoder graph, named in order."""

    def __init__(self) -> None:
        from onnx import numpy_helper

        self._array = numpy_helper.from_array
        self.nodes: list[Any] = []
        self.weights: list[Any] = []

    def weight(self, name: str, value: np.ndarray) -> str:
        self.weights.append(self._array(np.array(value, order="C"), name))  # 0-d stays 0-d
        return name

    def op(self, kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output


def _attention(g: _Graph, layer: Layer, x: str, p: str, heads: int) -> str:
    hidden = layer.out_w.shape[0]
    qkv = g.op("MatMul", [x, g.weight(p + "qkv_w", layer.qkv_w)], p + "qkv_mm")
    qkv = g.op("Add", [qkv, g.weight(p + "qkv_b", layer.qkv_b)], p + "qkv")
    shape = np.array([0, 3, heads, hidden // heads], np.int64)
    split = g.op("Reshape", [qkv, g.weight(p + "qkv_shape", shape)], p + "qkv_r")
    split = g.op("Transpose", [split], p + "qkv_t", perm=[1, 2, 0, 3])  # (3, heads, T, d)
    q, k, v = (
        g.op("Gather", [split, g.weight(p + f"part{i}", np.array(i, np.int64))], p + f"p{i}")
        for i in range(3)
    )
    scores = g.op("MatMul", [q, g.op("Transpose", [k], p + "kt", perm=[0, 2, 1])], p + "s")
    scores = g.op("Softmax", [scores], p + "sm", axis=-1)
    context = g.op("MatMul", [scores, v], p + "c")  # (heads, T, d)
    context = g.op("Transpose", [context], p + "ct", perm=[1, 0, 2])
    flat = g.weight(p + "flat", np.array([0, hidden], np.int64))
    context = g.op("Reshape", [context, flat], p + "cr")
    out = g.op("MatMul", [context, g.weight(p + "out_w", layer.out_w)], p + "o_mm")
    return g.op("Add", [out, g.weight(p + "out_b", layer.out_b)], p + "o")


def _feed_forward(g: _Graph, layer: Layer, x: str, p: str) -> str:
    up = g.op("MatMul", [x, g.weight(p + "up_w", layer.up_w)], p + "u_mm")
    up = g.op("Add", [up, g.weight(p + "up_b", layer.up_b)], p + "u")
    # Exact GELU, x * (1 + erf(x / sqrt 2)) / 2, as BERT's (ONNX Runtime fuses it).
    sqrt2, one, half = (np.array(v, np.float32) for v in (np.sqrt(2.0), 1.0, 0.5))
    erf = g.op("Erf", [g.op("Div", [up, g.weight(p + "sqrt2", sqrt2)], p + "gd")], p + "ge")
    erf = g.op("Add", [erf, g.weight(p + "one", one)], p + "g1")
    gelu = g.op("Mul", [g.op("Mul", [up, erf], p + "gm"), g.weight(p + "half", half)], p + "g")
    down = g.op("MatMul", [gelu, g.weight(p + "down_w", layer.down_w)], p + "d_mm")
    return g.op("Add", [down, g.weight(p + "down_b", layer.down_b)], p + "d")


def _norm(g: _Graph, x: str, w: np.ndarray, b: np.ndarray, eps: float, name: str) -> str:
    inputs = [x, g.weight(name + "_w", w), g.weight(name + "_b", b)]
    return g.op("LayerNormalization", inputs, name, axis=-1, epsilon=eps)


def model_bytes(m: Model) -> bytes:
    """The encoder layers and mean pooling: (tokens, hidden) embeddings -> (hidden,) vector."""
    from onnx import TensorProto, helper

    g, x = _Graph(), "x"
    for i, layer in enumerate(m.layers):
        p = f"l{i}_"
        x = g.op("Add", [x, _attention(g, layer, x, p, m.heads)], p + "res1")
        x = _norm(g, x, layer.ln1_w, layer.ln1_b, m.eps, p + "ln1")
        x = g.op("Add", [x, _feed_forward(g, layer, x, p)], p + "res2")
        x = _norm(g, x, layer.ln2_w, layer.ln2_b, m.eps, p + "ln2")
    g.op("ReduceMean", [x, g.weight("axis0", np.array([0], np.int64))], "pooled", keepdims=0)
    hidden = m.word.shape[1]
    graph = helper.make_graph(
        g.nodes,
        "minilm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["tokens", hidden])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [hidden])],
        g.weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return bytes(model.SerializeToString())


class ShortSession:
    """forward_short's layers in one ONNX Runtime session (thread-safe, as run() is)."""

    def __init__(self, m: Model) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # the caller's thread alone: see the module's note
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            model_bytes(m), options, providers=["CPUExecutionProvider"]
        )
        # The first run allocates ONNX Runtime's buffers: not a question's time.
        self(np.zeros((2, m.word.shape[1]), dtype=np.float32))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The mean-pooled vector of one text's embeddings x, (tokens, hidden)."""
        (pooled,) = self._session.run(["pooled"], {"x": x})
        return np.asarray(pooled, dtype=np.float32)
