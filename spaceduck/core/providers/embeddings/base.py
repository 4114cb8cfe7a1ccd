from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Fingerprint:
    """What produced a set of vectors; vectors from different fingerprints never mix."""

    provider: str
    model: str
    dimensions: int

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}/{self.dimensions}d"


class Embedder(Protocol):
    fingerprint: Fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dimensions) float32 array of L2-normalised rows.

        Raises ProviderError when the provider fails; never returns partial output.
        """
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalise each row; an all-zero row stays zero instead of becoming NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)
