from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

# "unsure": the arbiter cannot tell; a person decides (the conflict inbox).
Verdict = Literal["contradiction", "consistent", "unsure"]


@dataclass(frozen=True)
class Arbitration:
    """The arbiter's answer to "does the new statement contradict the old one?"."""

    verdict: Verdict
    reason: str


class ChatProvider(Protocol):
    """The chat LLM's jobs, each with a structured answer.

    ``heuristic`` answers them with deterministic rules; ``openai`` asks a model
    through ``json_schema`` structured output. Both raise ProviderError on failure.

    Providers only talk to models: what a job means for memory (the classification
    prompt, its schema, the offline extraction rules) lives in ``memories.extraction``,
    which calls ``complete_json`` when ``has_model`` is true and its own rules otherwise.
    """

    name: str
    model: str
    has_model: bool

    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        """One summary of the texts, in order, at most about ``max_words`` words."""
        ...

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        """Whether ``candidate`` contradicts ``existing`` (same subject, incompatible claim)."""
        ...

    def complete_json(
        self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """A JSON object matching ``schema`` (its top level checked), answering ``user``
        under the ``system`` instructions. ProviderError on failure, and always for a
        provider without a model (``has_model`` false)."""
        ...

    def complete_text(
        self,
        *,
        user: str,
        system: str | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> str:
        """The model's plain-text reply to ``user`` (stripped), at temperature 0.

        ``model`` overrides the configured model for this call; with ``max_tokens`` a
        reply cut at that limit is still returned. ProviderError on failure, and always
        for a provider without a model (``has_model`` false)."""
        ...
