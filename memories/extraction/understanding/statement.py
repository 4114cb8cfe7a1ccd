"""What the parse reader gives: a statement per thing a clause says, a reading per
message; and how a clause declines (to the rules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memories.extraction.claims import Claim
from memories.extraction.validity import Validity


@dataclass(frozen=True)
class Statement:
    """One thing a clause says, as a canonical third-person sentence with its claim."""

    content: str
    claim: Claim | None
    kind: str = "fact"
    validity: Validity = field(default_factory=Validity)
    sentence: str = ""
    occurred_at: datetime | None = None  # a past state's end (or start), when said
    ends: str = ""  # what an ending names ("climbing gym"): the facts naming it end with it


@dataclass
class Reading:
    statements: list[Statement] = field(default_factory=list)
    rest: str = ""  # the sentences the reader did not own, for the rules
    notes: list[str] = field(default_factory=list)  # why a sentence fell back to the rules


class _Decline(Exception):
    """The reader does not understand this clause well enough: the rules read it."""
