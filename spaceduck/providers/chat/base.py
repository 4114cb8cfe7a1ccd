from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Verdict = Literal["contradiction", "consistent"]


@dataclass(frozen=True)
class Arbitration:
    """The arbiter's answer to "does the new statement contradict the old one?"."""

    verdict: Verdict
    reason: str


class ChatProvider(Protocol):
    """The chat LLM's jobs, each with a structured answer.

    ``heuristic`` answers them with deterministic rules; ``openai`` asks a model
    through ``json_schema`` structured output. Both raise ProviderError on failure.
    """

    name: str
    model: str

    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        """One summary of the texts, in order, at most about ``max_words`` words."""
        ...

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        """Whether ``candidate`` contradicts ``existing`` (same subject, incompatible claim)."""
        ...
