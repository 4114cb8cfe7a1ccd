"""Deterministic feature-hashing embeddings: numpy only, instant, no model.

Tokens and character trigrams are hashed (blake2b, stable across processes,
unlike ``hash()``) into signed buckets. Texts sharing words land close together,
which is enough for tests and for a zero-dependency fallback; it knows nothing
of synonyms.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from spaceduck.core.providers.embeddings.base import Fingerprint, normalise_rows

_WORD = re.compile(r"\w+", re.UNICODE)


def _features(text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    grams = [f"#{w[i : i + 3]}" for w in words if len(w) > 3 for i in range(len(w) - 2)]
    return words + grams


class HashEmbedder:
    def __init__(self, *, dimensions: int = 384) -> None:
        self.fingerprint = Fingerprint("hash", "blake2b-words-trigrams-v1", dimensions)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        dims = self.fingerprint.dimensions
        out = np.zeros((len(texts), dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in _features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                weight = 1.0 if not feature.startswith("#") else 0.5
                out[row, (value >> 1) % dims] += sign * weight
        return normalise_rows(out)
