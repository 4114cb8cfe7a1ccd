"""A scripted chat "model" for the classification stage, without HTTP.

Subclasses say what the model answers for one message (``memories(text, role)``, a list of
CLASSIFY_SCHEMA items built with ``memory_item``); ``complete_json`` wraps them as the model's
JSON object, so the stage reads them exactly as it reads a real model's answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from spaceduck.core.providers.chat.base import Arbitration


def memory_item(**overrides: Any) -> dict[str, Any]:
    """One well-formed CLASSIFY_SCHEMA memory object (a stored fact unless overridden)."""
    item: dict[str, Any] = {
        "kind": "fact",
        "title": "Scripted memory",
        "content": "The user prefers tea over coffee.",
        "summary": "",
        "importance": "standard",
        "confidence": "stated",
        "tags": [],
        "procedure_subtype": "none",
        "slot": "none",
        "time_hint": "",
        "retention": "store",
        "reject_reason": "none",
    }
    return item | overrides


_MESSAGE = re.compile(
    r"^Message role: (?P<role>\w+)\n(?:Message date: [^\n]*\n)?Message:\n(?P<text>.*)\Z", re.DOTALL
)


class ScriptedModel:
    """A chat provider with a "model" whose classification answer is scripted."""

    name = "scripted"
    model = "scripted-model"
    has_model = True

    def memories(self, text: str, role: str) -> list[dict[str, Any]]:
        return []

    def summarize(self, *, texts: Sequence[str], max_words: int = 120) -> str:
        return " ".join(texts)

    def arbitrate(self, *, existing: str, candidate: str) -> Arbitration:
        return Arbitration(verdict="consistent", reason="scripted model")

    def complete_text(
        self,
        *,
        user: str,
        system: str | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> str:
        raise AssertionError(f"unexpected plain-text request: {user[:80]!r}")

    def complete_json(
        self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        found = _MESSAGE.match(user)
        assert found, f"unexpected classification request: {user[:80]!r}"
        return {"memories": self.memories(found["text"], found["role"])}
