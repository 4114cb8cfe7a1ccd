"""Building a candidate from a clause the rules read: its topic tag, title and the
context every clause of a sentence shares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memories.extraction import rules_words as W
from memories.extraction.classify import (
    clean_tags,
    clip_title,
)
from memories.extraction.types import IMPORTANCE, Candidate


@dataclass(frozen=True)
class Context:
    """What the whole sentence says about every clause in it."""

    confidence: float
    now: datetime


# --- building candidates -
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tag, re.compile(rf"\b(?:{words})\b", re.IGNORECASE)) for tag, words in W.TOPICS
)


def topic_tag(text: str) -> str:
    return next((tag for tag, pattern in _TOPICS if pattern.search(text)), "")


def make_candidate(
    kind: str,
    content: str,
    *,
    importance: str,
    confidence: float,
    tags: list[str],
    subtype: str = "",
    time_hint: str = "",
    occurred_at: datetime | None = None,
    retention: str = "store",
    reject_reason: str = "",
    text: str = "",
) -> Candidate:
    topics = [tag for tag, pattern in _TOPICS if pattern.search(text or content)]
    title = re.sub(r"^The user(?:'s)? ", "", content)
    return Candidate(
        kind=kind,
        content=content,
        title=clip_title(title[:1].upper() + title[1:]),
        summary=content if len(content) <= 160 else clip_title(content, 160),
        importance=IMPORTANCE[importance],
        confidence=confidence,
        tags=clean_tags(tags + topics) or [kind],
        procedure_subtype=subtype,
        time_hint=time_hint,
        occurred_at=occurred_at,
        retention="reject" if retention == "reject" else "store",
        reject_reason=reject_reason,
        stage="rules",
    )
