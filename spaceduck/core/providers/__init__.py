"""Pluggable providers: embeddings and the chat LLM, chosen by settings.

``get_embedder()`` and ``get_chat()`` build the configured provider once per
process; ``reset_providers()`` forgets them (tests that change settings).
``query_vector()`` embeds recall's question through a cache of recent ones.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from django.conf import settings

from spaceduck.core.providers.chat.base import ChatProvider
from spaceduck.core.providers.embeddings.base import Embedder
from spaceduck.core.providers.embeddings.query_cache import QueryCache
from spaceduck.core.providers.errors import ProviderError

__all__ = [
    "ChatProvider",
    "Embedder",
    "ProviderError",
    "embedder_for",
    "get_chat",
    "get_embedder",
    "query_vector",
    "reset_providers",
]

QUERY_CACHE = QueryCache()


def get_embedder() -> Embedder:
    """The embedder in effect: the environment's configuration with the provider, model and
    dimensions of Settings > Memory (spaceduck.core.runtime), which change when a re-embedding
    switches the index; each process follows within the settings' refresh period."""
    from spaceduck.core import runtime

    return embedder_for(
        tuple(sorted({**settings.SPACEDUCK_EMBEDDINGS, **runtime.embedding_choice()}.items()))
    )


@cache
def embedder_for(conf_items: tuple[tuple[str, object], ...]) -> Embedder:
    """An embedder for one configuration (``sorted(conf.items())``), built once per process."""
    conf = dict(conf_items)
    provider = conf["provider"]
    if provider == "hash":
        from spaceduck.core.providers.embeddings.hashing import HashEmbedder

        return HashEmbedder(dimensions=int(conf["dimensions"] or 384))
    if provider == "local":
        from spaceduck.core.providers.embeddings.local import LocalMiniLMEmbedder

        return LocalMiniLMEmbedder.from_settings(conf)
    from spaceduck.core.providers.embeddings.openai import OpenAIEmbedder

    return OpenAIEmbedder.from_settings(conf)


def query_vector(embedder: Embedder, text: str) -> np.ndarray:
    """``embedder``'s (read-only) vector of a recall question, cached (query_cache.py)."""
    return QUERY_CACHE.vector(embedder, text)


@cache
def get_chat() -> ChatProvider:
    conf = settings.SPACEDUCK_CHAT
    if conf["provider"] == "heuristic":
        from spaceduck.core.providers.chat.heuristic import HeuristicChat

        return HeuristicChat()
    from spaceduck.core.providers.chat.openai import OpenAIChat

    return OpenAIChat.from_settings(conf)


def reset_providers() -> None:
    embedder_for.cache_clear()
    get_chat.cache_clear()
    QUERY_CACHE.clear()
