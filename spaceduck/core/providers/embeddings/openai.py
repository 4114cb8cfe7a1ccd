"""Embeddings from the OpenAI API or any OpenAI-compatible server (vLLM, Ollama, LM Studio...).

The client never retries (``max_retries=0``): the task queue owns retries and
backoff, and a failure surfaces as ProviderError instead of a silent stall.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import openai
from django.core.exceptions import ImproperlyConfigured

from spaceduck.core.providers.embeddings.base import Fingerprint, normalise_rows
from spaceduck.core.providers.errors import ProviderError

DEFAULT_MODEL = "text-embedding-3-small"


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        dimensions: int,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        self.fingerprint = Fingerprint("openai", model, dimensions)
        self.batch_size = batch_size
        self.timeout = timeout
        # Local servers ignore the key, but the client insists on having one.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )

    @classmethod
    def from_settings(cls, conf: Mapping[str, Any]) -> OpenAIEmbedder:
        if not conf.get("dimensions"):
            # The vector table's width is fixed by this number, so it is never guessed.
            raise ImproperlyConfigured(
                "SPACEDUCK_EMBEDDING_PROVIDER=openai needs SPACEDUCK_EMBEDDING_DIMENSIONS "
                "(the vector length the model returns, e.g. 1536 for text-embedding-3-small)."
            )
        if not (conf.get("base_url") or conf.get("api_key")):
            raise ImproperlyConfigured(
                "SPACEDUCK_EMBEDDING_PROVIDER=openai needs SPACEDUCK_EMBEDDING_BASE_URL "
                "or SPACEDUCK_EMBEDDING_API_KEY."
            )
        return cls(
            dimensions=conf["dimensions"],
            model=conf.get("model") or DEFAULT_MODEL,
            base_url=conf.get("base_url"),
            api_key=conf.get("api_key"),
            timeout=conf.get("timeout") or 30.0,
            batch_size=conf.get("batch_size") or 64,
        )

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        dims = self.fingerprint.dimensions
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            rows.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return normalise_rows(np.vstack(rows))

    def _embed_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        # Some servers reject "" outright; a single space embeds as "nothing" everywhere.
        inputs = [text if text else " " for text in texts]
        try:
            response = self._client.embeddings.create(
                model=self.fingerprint.model,
                input=inputs,
                dimensions=self.fingerprint.dimensions,
                # The client defaults to base64, which many compatible servers don't speak.
                encoding_format="float",
            )
        except (openai.OpenAIError, json.JSONDecodeError) as exc:
            raise self._error(describe_openai_error(exc, self.timeout)) from exc
        return self._rows(response, expected=len(inputs))

    def _rows(self, response: Any, *, expected: int) -> list[np.ndarray]:
        """Vectors in input order, each checked for length and finiteness."""
        dims = self.fingerprint.dimensions
        try:
            by_index = {int(item.index): item.embedding for item in response.data}
        except (AttributeError, TypeError, ValueError) as exc:
            raise self._error(f"malformed response ({exc})") from exc
        if sorted(by_index) != list(range(expected)):
            raise self._error(
                f"expected {expected} embeddings with indices 0..{expected - 1}, "
                f"got indices {sorted(by_index)}"
            )
        rows = []
        for index in range(expected):
            try:
                row = np.asarray(by_index[index], dtype=np.float32)
            except (TypeError, ValueError) as exc:
                raise self._error(f"embedding {index} is not a list of numbers ({exc})") from exc
            if row.shape != (dims,):
                raise self._error(
                    f"expected {dims}-dimensional vectors (SPACEDUCK_EMBEDDING_DIMENSIONS), "
                    f"received {row.shape[0] if row.ndim == 1 else row.shape} dimensions; "
                    "does the model support the 'dimensions' parameter?"
                )
            if not np.all(np.isfinite(row)):
                raise self._error(f"embedding {index} contains NaN or infinite values")
            rows.append(row)
        return rows

    def _error(self, cause: str) -> ProviderError:
        return ProviderError(
            f"openai embeddings failed (model {self.fingerprint.model} at {self.base_url}): {cause}"
        )


def describe_openai_error(exc: Exception, timeout: float) -> str:
    """A one-line cause for an openai client failure, without secrets."""
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout}s"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect ({exc.__cause__ or exc})"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        # Proxies answer with whole HTML pages; a line of it is enough to diagnose.
        return f"HTTP {exc.status_code}: {str(detail or exc.message)[:300]}"
    if isinstance(exc, json.JSONDecodeError):
        return f"response body is not JSON ({exc})"
    return f"{type(exc).__name__}: {exc}"
