"""A controlled embedder: texts get vectors with chosen cosines to a base text."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from spaceduck.core.providers.embeddings.base import Fingerprint
from spaceduck.core.providers.embeddings.hashing import HashEmbedder


class ScriptedEmbedder:
    """``cosines[text] = c`` gives ``text`` the cosine ``c`` with the base vector e0.

    The base text (any text mapped to 1.0) embeds to e0. Every scripted text gets
    its own orthogonal direction e_i, so two scripted texts are related only
    through e0: cos(t1, t2) = c1 * c2. Unscripted texts fall back to hashing.
    """

    def __init__(self, cosines: dict[str, float], dimensions: int = 384) -> None:
        self.fingerprint = Fingerprint("hash", "blake2b-words-trigrams-v1", dimensions)
        self._fallback = HashEmbedder(dimensions=dimensions)
        self._vectors: dict[str, np.ndarray] = {}
        for axis, (text, cosine) in enumerate(cosines.items(), start=1):
            vector = np.zeros(dimensions, dtype=np.float32)
            vector[0] = cosine
            vector[axis] = math.sqrt(max(0.0, 1.0 - cosine * cosine))
            self._vectors[text] = vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [self._vectors.get(t) for t in texts]
        fallback = self._fallback.embed([t for t, r in zip(texts, rows, strict=True) if r is None])
        out, k = [], 0
        for row in rows:
            if row is None:
                row, k = fallback[k], k + 1
            out.append(row)
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)
