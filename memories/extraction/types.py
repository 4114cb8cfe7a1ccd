"""Value types shared by the extraction stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from memories.extraction.claims import Claim

IMPORTANCE: dict[str, float] = {
    "trivial": 0.3,
    "standard": 0.5,
    "significant": 0.7,
    "core": 0.85,
    "critical": 1.0,
}
CONFIDENCE: dict[str, float] = {
    "speculative": 0.4,
    "likely": 0.6,
    "stated": 0.8,
    "certain": 0.95,
}
KINDS = ("fact", "episode", "procedure")
PROCEDURE_SUBTYPES = ("constraint", "workflow", "behavioral")
REJECT_REASONS = ("ephemeral_noise", "duplicate_candidate", "low_confidence", "ambiguous")
# Identity slots: a new value for a slot supersedes the old one whatever the cosine.
SLOTS = ("name", "age", "location", "employer", "role", "email", "phone", "pronouns", "birthday")

Retention = Literal["store", "reject"]
InjectionMode = Literal["strict", "relaxed"]


@dataclass
class Candidate:
    """One thing a stage proposes to remember, before it touches the database."""

    kind: str
    content: str  # one canonical sentence, e.g. "The user lives in Paris."
    title: str = ""
    summary: str = ""
    importance: float = IMPORTANCE["standard"]
    confidence: float = CONFIDENCE["stated"]
    tags: list[str] = field(default_factory=list)
    procedure_subtype: str = ""
    slot: str = ""  # identity slot (see SLOTS), "" when none
    time_hint: str = ""  # for episodes: the text that dates it ("yesterday", "on May 3")
    occurred_at: datetime | None = None
    retention: Retention = "store"
    reject_reason: str = ""  # one of REJECT_REASONS when retention == "reject"
    # Which stage proposed it: "regex", "rules" (the offline classifier), "model <name>" (the
    # OpenAI-compatible classifier), "api" (a direct write). Records before: "llm".
    stage: str = "rules"
    # What it claims, when a stage said (the model's structured output); otherwise read from
    # the content by the rules when it is written (memories.extraction.claims.claim_of).
    claim: Claim | None = None
    # Why the user may not mean it (sarcasm, a hypothetical, a quotation), when a stage
    # doubts it: it is never active on its own, and a memory it would replace is not
    # replaced without a person (the conflict inbox).
    doubt: str = ""
    # When what it says holds ("until Friday", "for the summer", "since 2019"): past
    # ``valid_until`` it leaves recall and context (the staleness job marks it stale).
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    # The memories it corrects ("make it seven" after "dinner for six"): superseded by it,
    # whatever their claims or cosine say.
    replaces: list[int] = field(default_factory=list)
    # What an ending names ("cancelled my membership at the climbing gym": "climbing gym"):
    # the holder's live facts that name it end with it, whatever their claim.
    ends: str = ""


@dataclass
class Source:
    """Where the text came from; stages use it to decide what may be learnt from it."""

    role: str  # user, assistant, system, tool
    text: str
    source_type: str = "user_message"  # see memories.models.SourceType
    task_id: str = ""
    skill_id: str = ""
    from_recall: bool = False  # the text was assembled from recalled memories
    # The conversation before it (memories.extraction.understanding.Before): whom "she"
    # is, what the assistant asked, what the previous turn said. None: read alone.
    before: Any = None

    @property
    def injection_mode(self) -> InjectionMode:
        # Content written by autonomous tasks (and tool output) is untrusted: one hit rejects.
        return "strict" if self.task_id or self.role == "tool" else "relaxed"


@dataclass
class Verdict:
    """A stage's decision on a candidate, kept in the extraction record."""

    candidate: Candidate
    decision: str  # "stored", "rejected", "duplicate", "superseded_old", "skipped", ...
    reason: str = ""
    memory_id: int | None = None
    matched_memory_id: int | None = None
    extra: dict[str, object] = field(default_factory=dict)


def score(value: float | str, buckets: dict[str, float], name: str) -> float:
    """A 0..1 score from a number or a bucket name (API input)."""
    from spaceduck.core.errors import InvalidInput

    if isinstance(value, str):
        if value not in buckets:
            raise InvalidInput(f"{name} must be a number in [0, 1] or one of {', '.join(buckets)}")
        return buckets[value]
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(f"{name} must be within [0, 1], got {value}")
    return float(value)


def candidate_from_api(data: dict[str, object]) -> Candidate:
    """A Candidate from a direct write (POST /api/memories); the gate validates the rest."""
    return Candidate(
        kind=str(data["kind"]),
        content=str(data["content"]).strip(),
        title=str(data.get("title") or ""),
        summary=str(data.get("summary") or ""),
        importance=score(data.get("importance", "standard"), IMPORTANCE, "importance"),  # type: ignore[arg-type]
        confidence=score(data.get("confidence", "stated"), CONFIDENCE, "confidence"),  # type: ignore[arg-type]
        tags=list(data.get("tags") or []),  # type: ignore[call-overload]
        procedure_subtype=str(data.get("procedure_subtype") or ""),
        slot=str(data.get("slot") or ""),
        occurred_at=data.get("occurred_at"),  # type: ignore[arg-type]
        valid_from=data.get("valid_from"),  # type: ignore[arg-type]
        valid_until=data.get("valid_until"),  # type: ignore[arg-type]
        stage="api",
    )
