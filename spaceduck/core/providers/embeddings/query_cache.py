"""Recent query vectors, so that a question asked again is not embedded again.

The same question comes back often: the dashboard's search re-runs as a page is
reloaded or paged, and an agent retries a failed call. Only recall's query path
uses this cache; writes embed their documents as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from spaceduck.core.providers.embeddings.base import Embedder, Fingerprint

# ~1.6 KB a 384-d vector: 1024 of them (~2 MB with their texts) hold a dashboard's
# and a few agents' recent questions.
SIZE = 1024


class QueryCache:
    """The last ``size`` query vectors by (fingerprint, text), least recently used out.

    A hit also needs the very embedder object that made the vector: an embedder
    rebuilt for other settings (``reset_providers``, a switch of Settings > Memory),
    or a test's stand-in with the same fingerprint, embeds again. Thread-safe: serving
    threads share one cache per process.
    """

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Fingerprint, str], tuple[Embedder, np.ndarray]] = (
            OrderedDict()
        )

    def vector(self, embedder: Embedder, text: str) -> np.ndarray:
        """``embedder.embed([text])[0]``, from the cache when it was asked before."""
        key = (embedder.fingerprint, text)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is embedder:
                self._entries.move_to_end(key)
                return entry[1]
        # Outside the lock: embedding takes milliseconds, and two threads asking the
        # same new question at once only embed it twice.
        vector = embedder.embed([text])[0]
        vector.setflags(write=False)  # shared by every later caller: none may change it
        with self._lock:
            self._entries[key] = (embedder, vector)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
