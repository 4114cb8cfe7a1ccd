from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from memories.extraction.types import Candidate

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

    def classify(self, *, text: str, role: str) -> list[Candidate]:
        """What in one message is worth remembering, as candidates with ``stage="llm"``.

        ``role`` is who wrote ``text`` (user, assistant or tool): only the user's own
        statements establish facts about the user. ``[]`` means nothing to remember;
        a failure raises ProviderError instead, so it is retried, never mistaken for ``[]``.
        """
        ...
