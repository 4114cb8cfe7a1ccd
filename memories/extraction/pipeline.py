"""The deterministic part of extraction: from one message to the candidates worth keeping.

``propose`` runs every stage that needs no database: the guard's skip rules,
injection detection on the message, the regex stage, the classifier (LLM or
heuristic), the steel gate, the guard's per-candidate checks and injection
detection on each candidate. Every candidate leaves a Verdict, so the
extraction record can say what happened to each and why. Dedup and
contradiction handling, which need the database, happen afterwards
(memories.dedup).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from memories.extraction import gate, guard, injection, regex
from memories.extraction.types import Candidate, Source, Verdict
from spaceduck.failpoints import failpoint
from spaceduck.providers.chat.base import ChatProvider


def _rejected(candidates: Sequence[Candidate], reason: str) -> list[Verdict]:
    return [Verdict(candidate=c, decision="rejected", reason=reason) for c in candidates]


def _merge(regex_found: list[Candidate], classified: list[Candidate]) -> list[Candidate]:
    """Regex wins for identity slots; the classifier adds everything else."""
    slots = {c.slot for c in regex_found if c.slot}
    return regex_found + [c for c in classified if not (c.slot and c.slot in slots)]


def _by_retention(candidates: list[Candidate]) -> tuple[list[Candidate], list[Verdict]]:
    keep = [c for c in candidates if c.retention == "store"]
    dropped = [
        Verdict(
            candidate=c, decision="rejected", reason=f"retention: {c.reject_reason or 'reject'}"
        )
        for c in candidates
        if c.retention != "store"
    ]
    return keep, dropped


def candidate_rejection(candidate: Candidate, source: Source) -> str | None:
    """The guard's verdict, then injection detection on the candidate's own text."""
    reason = guard.check(candidate, source)
    if reason is None:
        reason = injection_reason(f"{candidate.title}\n{candidate.content}", source)
    return reason


def _guarded(candidates: list[Candidate], source: Source) -> tuple[list[Candidate], list[Verdict]]:
    keep: list[Candidate] = []
    verdicts: list[Verdict] = []
    for candidate in candidates:
        reason = candidate_rejection(candidate, source)
        if reason is None:
            keep.append(candidate)
        else:
            verdicts.append(Verdict(candidate=candidate, decision="rejected", reason=reason))
    return keep, verdicts


def injection_reason(text: str, source: Source) -> str | None:
    patterns = settings.INJECTION_PATTERNS
    if not injection.is_injection(text, source.injection_mode, patterns):
        return None
    families = injection.scan(text, patterns)
    return f"injection ({source.injection_mode} mode): {', '.join(families)}"


def propose(source: Source, chat: ChatProvider) -> tuple[list[Candidate], list[Verdict]]:
    """The candidates to store (in order) and a verdict for every one that was dropped.

    Raises ProviderError when the classifier fails: a failed classification is
    retried by the task queue, never turned into "nothing to remember".
    """
    skip = guard.skip_reason(source)
    if skip is not None:
        return [], [
            Verdict(candidate=Candidate(kind="", content=""), decision="skipped", reason=skip)
        ]
    text = guard.strip_recalled(source.text)
    verdicts: list[Verdict] = []
    found = regex.extract(text) if source.role == "user" else []
    failpoint("extraction.before_classify")
    classified = chat.classify(text=text, role=source.role) if text.strip() else []
    candidates, dropped = _by_retention(_merge(found, classified))
    verdicts += dropped
    reason = injection_reason(text, source)
    if reason is not None:
        return [], verdicts + _rejected(candidates, reason)
    candidates, gate_verdicts = gate.validate(candidates)
    candidates, guard_verdicts = _guarded(candidates, source)
    return candidates, verdicts + gate_verdicts + guard_verdicts
