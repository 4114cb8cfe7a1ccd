"""The clause reader's candidates (clauses.py reads, this builds): facts, episodes, rules
and procedures from one clause, and the refining pass over everything proposed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from memories.extraction import clauses_words as W
from memories.extraction.classify import find_time_hint, resolve_time_hint
from memories.extraction.rules.build import make_candidate as _candidate
from memories.extraction.rules.facts import make_fact as _rules_fact
from memories.extraction.rules.person import sentence_case as _sentence_case
from memories.extraction.rules.person import third_person as _third_person
from memories.extraction.types import CONFIDENCE, IMPORTANCE, Candidate


@dataclass(frozen=True)
class Clause:
    text: str  # normalised: contractions expanded, chat spellings read, opener removed
    hedged: bool = False
    opens_sentence: bool = True  # "named after Beatles" after a comma is no diary entry
    standing: bool = False  # after "When I ask for code, ...": an order for every such time
    request: bool = False  # asked as a question ("Could you stop ...?"): an order only if lasting


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def clause_rule(text: str) -> Candidate:
    return _candidate(
        "procedure",
        _sentence_case(_third_person(text, plural_we=True)),
        importance="significant",
        confidence=CONFIDENCE["stated"],
        tags=["constraint"],
        subtype="constraint",
    )


# --- candidates -------------------------------------------------------------------------------
def refine(candidates: list[Candidate]) -> list[Candidate]:
    """A preference about the assistant's replies is an order on how to talk, not a fact:
    "I prefer short answers with bullet points", "I like it when you give me examples"."""
    kept = [
        as_behavioral(c) if _about_replies(c) else _as_constraint(c) if _team_rule(c) else c
        for c in candidates
        if not (c.kind == "procedure" and W.CREATIVE_TASK.match(c.content))
        and not (c.kind == "fact" and _next_step(c.content))
    ]
    return [part for candidate in kept for part in _parallel_parts(candidate)]


def _parallel_parts(candidate: Candidate) -> list[Candidate]:
    """ "The user uses Obsidian for notes and Todoist for tasks" is two facts: two objects in
    the same frame ("X for A", "a X named A") joined by "and" under one verb."""
    found = W.PARALLEL.match(candidate.content) if candidate.kind == "fact" else None
    if found is None or candidate.slot:
        return [candidate]
    head = found.group("head")
    return [
        replace(candidate, content=_sentence_case(f"{head} {found.group('a')}")),
        replace(candidate, content=_sentence_case(f"{head} {found.group('b')}")),
    ]


def _next_step(content: str) -> bool:
    """ "The user will try the soup recipe tonight", "will ask their colleague": what the user is
    about to do in this conversation, not a plan worth keeping (a plan has a date further off)."""
    planned = W.FAR_DATE.search(content) or W.LIKELIHOOD.search(content)
    return bool(W.NEXT_STEP.match(content)) and not planned


def _team_rule(candidate: Candidate) -> bool:
    """ "We don't use ORMs here, raw SQL only": what a team never, only or always does is a rule."""
    return (
        candidate.kind == "fact"
        and not candidate.slot
        and bool(W.TEAM_RULE_FACT.match(candidate.content))
    )


def _about_replies(candidate: Candidate) -> bool:
    return (
        candidate.kind == "fact"
        and not candidate.slot
        and bool(W.REPLY_PREFERENCE.match(candidate.content))
    )


def _as_constraint(candidate: Candidate) -> Candidate:
    return _as_procedure(candidate, "constraint", IMPORTANCE["core"])


def as_behavioral(candidate: Candidate) -> Candidate:
    return _as_procedure(candidate, "behavioral", IMPORTANCE["significant"])


def _as_procedure(candidate: Candidate, subtype: str, importance: float) -> Candidate:
    return replace(
        candidate,
        kind="procedure",
        procedure_subtype=subtype,
        tags=[subtype],
        importance=max(candidate.importance, importance),
    )


def clause_fact(text: str, clause: Clause, *, confidence: float | None = None) -> Candidate:
    level = confidence or (CONFIDENCE["speculative"] if clause.hedged else CONFIDENCE["stated"])
    return _rules_fact(text, "personal", level, importance=None)


def clause_episode(text: str, now: datetime) -> Candidate:
    hint = find_time_hint(text)
    return _candidate(
        "episode",
        _sentence_case(_third_person(text, past=True)),
        importance="standard",
        confidence=CONFIDENCE["stated"],
        tags=["event"],
        time_hint=hint,
        occurred_at=resolve_time_hint(hint, now) if hint else None,
    )
