"""What happens to a candidate memory (memories.write.decide): a table of what was read
(held claims, the new claim, neighbours, the arbiter's verdicts, re-reads under the lock)
and the outcome, its targets and its reason; then that the write path decides once."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest

from memories.extraction.claims import Claim, derive
from memories.extraction.types import Candidate
from memories.write import decide as decide_module
from memories.write.decide import (
    BY_A_PERSON,
    SAID_AGAIN,
    Arbitration,
    Decision,
    Facts,
    Held,
    Locked,
    Neighbour,
    New,
    decide,
)
from memories.write.ingest import memory_write


def claim(content: str) -> Claim:
    found = derive(content)
    assert found is not None, content
    return found


def new(content: str, kind: str = "fact", **kwargs: Any) -> New:
    """The candidate ``content`` with the claim the rules read (none when they read none)."""
    return New(kind, derive(content), content=content, **kwargs)


def held(memory_id: int, content: str, **kwargs: Any) -> Held:
    return Held(memory_id, derive(content), **kwargs)


BERLIN, MUNICH = "The user lives in Berlin.", "The user lives in Munich."
TEA = "The user prefers tea over coffee."
COFFEE = "The user prefers coffee over tea."
NOT_A_CLAIM = "The team ships on Tuesdays."  # no claim the rules read
NEW_VALUE = "user location: a new value or polarity"


def targets(decision: Decision) -> tuple[int, ...]:
    """The memories the decision names: what it matched, supersedes or asks about."""
    if decision.outcome in ("duplicate", "ignore"):
        return () if decision.matched is None else (decision.matched,)
    return tuple(memory_id for memory_id, _ in decision.supersede + decision.ask)


ROWS = [
    # (facts, outcome, targets, reason)
    pytest.param(Facts(new(BERLIN)), "insert", (), "new memory", id="nothing-held"),
    pytest.param(
        Facts(new("The user's home is in Berlin, Germany."), holders=(held(1, BERLIN),)),
        "duplicate",
        (1,),
        "restates memory 1 (user location, the same value)",
        id="same-value-other-words",
    ),
    pytest.param(
        Facts(new(MUNICH), holders=(held(1, BERLIN),)),
        "update",
        (1,),
        "superseded older memory",
        id="another-value",
    ),
    pytest.param(
        Facts(new("The user no longer likes jazz."), holders=(held(1, "The user likes jazz."),)),
        "update",
        (1,),
        "superseded older memory",
        id="the-same-value-negated",
    ),
    pytest.param(
        Facts(
            new("The user no longer lives in Berlin."),
            holders=(held(1, BERLIN), held(2, MUNICH)),
        ),
        "update",
        (1,),
        "superseded older memory",
        id="a-denial-leaves-another-value-standing",
    ),
    pytest.param(
        Facts(new("The user no longer lives in Berlin."), holders=(held(2, MUNICH),)),
        "insert",
        (),
        "new memory",
        id="a-denial-of-a-value-not-held",
    ),
    pytest.param(
        Facts(
            new("The user lives in Rome."),
            holders=(held(3, "The user's sister lives in Rome."),),
            neighbours=(Neighbour(held(3, "The user's sister lives in Rome."), 0.97),),
        ),
        "insert",
        (),
        "new memory",
        id="another-holder-is-not-touched",
    ),
    pytest.param(
        Facts(new(COFFEE), holders=(held(4, "The user prefers tea."),)),
        "update",
        (4,),
        "superseded older memory",
        id="a-preference-between-the-same-things",
    ),
    pytest.param(
        Facts(
            new("The user prefers dark mode."),
            holders=(held(4, "The user prefers short answers."),),
        ),
        "insert",
        (),
        "new memory",
        id="a-preference-about-other-things",
    ),
    pytest.param(
        Facts(new("The user would rather have coffee over tea."), holders=(held(4, COFFEE),)),
        "duplicate",
        (4,),
        "restates memory 4 (user prefers:drink, the same value)",
        id="a-preference-restated",
    ),
    pytest.param(
        Facts(new(MUNICH, doubt="may be sarcasm"), holders=(held(1, BERLIN),)),
        "conflict",
        (1,),
        "waits for a person: the conflict inbox",
        id="doubt",
    ),
    pytest.param(
        Facts(new(MUNICH, doubt="may be sarcasm")),
        "insert",
        (),
        "a candidate: the user may not mean it (may be sarcasm)",
        id="doubt-with-nothing-to-replace",
    ),
    pytest.param(
        Facts(new(MUNICH, confidence=0.6), holders=(held(1, BERLIN),)),
        "conflict",
        (1,),
        "waits for a person: the conflict inbox",
        id="hedged",
    ),
    pytest.param(
        Facts(new(COFFEE), holders=(held(5, TEA, confidence=0.95, confirmed=SAID_AGAIN),)),
        "conflict",
        (5,),
        "waits for a person: the conflict inbox",
        id="confirmed-without-change-words",
    ),
    pytest.param(
        Facts(new(COFFEE), holders=(held(5, TEA, confirmed=BY_A_PERSON),)),
        "conflict",
        (5,),
        "waits for a person: the conflict inbox",
        id="confirmed-by-a-person",
    ),
    pytest.param(
        Facts(
            new("The user prefers coffee over tea now."),
            holders=(held(5, TEA, confidence=0.95, confirmed=SAID_AGAIN),),
        ),
        "update",
        (5,),
        "superseded older memory",
        id="confirmed-with-change-words",
    ),
    pytest.param(
        Facts(
            new(COFFEE, context="I switched to coffee."),
            holders=(held(5, TEA, confidence=0.95, confirmed=SAID_AGAIN),),
        ),
        "update",
        (5,),
        "superseded older memory",
        id="change-words-in-the-context",
    ),
    pytest.param(
        Facts(
            new(NOT_A_CLAIM),
            neighbours=(Neighbour(Held(7), 0.8),),
            arbitrations=(Arbitration(Held(7), 0.8, "unsure", "scripted", "heuristic"),),
        ),
        "conflict",
        (7,),
        "waits for a person: the conflict inbox",
        id="arbiter-unsure",
    ),
    pytest.param(
        Facts(
            new(NOT_A_CLAIM),
            neighbours=(Neighbour(Held(7), 0.8),),
            arbitrations=(Arbitration(Held(7), 0.8, "contradiction", "scripted", "heuristic"),),
        ),
        "update",
        (7,),
        "superseded older memory",
        id="arbiter-contradiction",
    ),
    pytest.param(
        Facts(
            new(NOT_A_CLAIM),
            neighbours=(Neighbour(Held(7), 0.8),),
            arbitrations=(Arbitration(Held(7), 0.8, "consistent", "scripted", "heuristic"),),
        ),
        "insert",
        (),
        "new memory",
        id="arbiter-consistent",
    ),
    pytest.param(
        Facts(new(MUNICH), slotted=(Held(8, slot="location"),)),
        "update",
        (8,),
        "superseded older memory",
        id="slot-holder",
    ),
    pytest.param(
        Facts(
            new("The user's meeting is on Thursday."),
            corrects=(held(17, "The user's meeting is on Tuesday."),),
        ),
        "update",
        (17,),
        "superseded older memory",
        id="a-correction",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), exact=Held(9)),
        "duplicate",
        (9,),
        "exact duplicate (content hash)",
        id="exact-duplicate",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), neighbours=(Neighbour(Held(10), 0.95),)),
        "duplicate",
        (10,),
        "near duplicate (cosine 0.950)",
        id="near-duplicate",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), neighbours=(Neighbour(Held(10), 0.95, ("p11", "p13")),)),
        "insert",
        (),
        "new memory",
        id="near-with-other-tokens",
    ),
    pytest.param(
        Facts(new(MUNICH), holders=(held(1, BERLIN),), neighbours=(Neighbour(Held(10), 0.95),)),
        "update",
        (1,),
        "superseded older memory",
        id="no-near-duplicate-when-a-claim-is-replaced",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), earlier=11),
        "ignore",
        (11,),
        "this message already produced it (a re-run)",
        id="re-run",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), exact=Held(11, same_message=True)),
        "ignore",
        (11,),
        "exact duplicate (content hash)",
        id="re-run-of-a-duplicate",
    ),
    pytest.param(
        Facts(New("fact"), budget_exhausted=True),
        "ignore",
        (),
        "budget_exhausted",
        id="budget",
    ),
    pytest.param(
        Facts(new(MUNICH), holders=(held(1, BERLIN),), locked=Locked(erased=True)),
        "ignore",
        (),
        "source_erased",
        id="source-erased",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), locked=Locked(raced=Held(12))),
        "duplicate",
        (12,),
        "exact duplicate (content hash)",
        id="stored-meanwhile",
    ),
    pytest.param(
        Facts(new(MUNICH), holders=(held(1, BERLIN),), locked=Locked(holders=(held(13, MUNICH),))),
        "duplicate",
        (13,),
        "restates memory 13 (user location, the same value)",
        id="restated-meanwhile",
    ),
    pytest.param(
        Facts(
            new(MUNICH),
            holders=(held(1, BERLIN),),
            locked=Locked(holders=(held(1, BERLIN), held(14, "The user lives in Oslo."))),
        ),
        "update",
        (1, 14),
        "superseded older memory",
        id="another-value-stored-meanwhile",
    ),
    pytest.param(
        Facts(new(NOT_A_CLAIM), locked=Locked(late=(Neighbour(Held(15), 0.93),))),
        "duplicate",
        (15,),
        "near duplicate (cosine 0.930)",
        id="near-duplicate-stored-meanwhile",
    ),
]


@pytest.mark.parametrize(("facts", "outcome", "names", "reason"), ROWS)
def test_the_decision_table(
    facts: Facts, outcome: str, names: tuple[int, ...], reason: str
) -> None:
    decision = decide(facts)
    assert (decision.outcome, targets(decision), decision.reason) == (outcome, names, reason)


def test_an_episode_that_restates_a_fact_is_stored() -> None:
    """An episode is an event with its own date, never a duplicate of the fact it ends."""
    gone = "The user no longer lives in Berlin."
    ended = New("episode", claim(gone))
    assert decide(Facts(ended, holders=(held(1, gone),))).outcome == "insert"


def test_each_replacement_says_why() -> None:
    decision = decide(
        Facts(
            new(MUNICH, slot="location"),
            holders=(held(1, BERLIN),),
            slotted=(Held(8, slot="location"),),
        )
    )
    assert decision.supersede == ((1, NEW_VALUE), (8, "slot 'location' has a new value"))
    contradicted = decide(
        Facts(
            new(NOT_A_CLAIM),
            neighbours=(Neighbour(Held(7), 0.8),),
            arbitrations=(Arbitration(Held(7), 0.8, "contradiction", "a reason", "heuristic"),),
        )
    )
    assert contradicted.supersede == ((7, "contradicted (heuristic arbiter: a reason)"),)
    assert contradicted.arbitrations == (
        {
            "memory_id": 7,
            "cosine": 0.8,
            "verdict": "contradiction",
            "reason": "a reason",
            "arbiter": "heuristic",
        },
    )


def test_the_inbox_says_why_a_person_is_asked() -> None:
    doubted = decide(Facts(new(MUNICH, doubt="may be sarcasm"), holders=(held(1, BERLIN),)))
    doubt = "the new statement may not be meant (may be sarcasm)"
    assert doubted.ask == ((1, f"{doubt}; it would replace it: {NEW_VALUE}"),)
    confirmed = decide(
        Facts(new(COFFEE), holders=(held(5, TEA, confidence=0.95, confirmed=SAID_AGAIN),))
    )
    [(memory_id, why)] = confirmed.ask
    assert memory_id == 5
    assert why.startswith("memory 5 was said again; the new statement was said once")
    # A memory less certain than the new statement is replaced, confirmed or not.
    weaker = held(5, TEA, confidence=0.5, confirmed=SAID_AGAIN)
    assert decide(Facts(new(COFFEE), holders=(weaker,))).outcome == "update"
    unsure = decide(
        Facts(
            new(NOT_A_CLAIM),
            arbitrations=(Arbitration(Held(7), 0.8, "unsure", "scripted", "heuristic"),),
        )
    )
    assert unsure.ask == ((7, "the heuristic arbiter is unsure: scripted"),)


def test_near_neighbours_with_other_tokens_are_listed() -> None:
    decision = decide(
        Facts(
            new(NOT_A_CLAIM),
            neighbours=(Neighbour(Held(10), 0.95123, ("p11", "p13")), Neighbour(Held(16), 0.7)),
        )
    )
    assert decision.not_duplicates == (
        {"memory_id": 10, "cosine": 0.9512, "differs": ["p11", "p13"]},
    )


# --- Once per candidate, through the write path ------------------------------------------------


@contextmanager
def decisions() -> Iterator[list[FrameType]]:
    """The calls of ``decide`` made inside the block (this thread), counted by a profiler."""
    calls: list[FrameType] = []
    code = decide_module.decide.__code__

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code is code:
            calls.append(frame)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def write(content: str, **kwargs: Any):  # type: ignore[no-untyped-def]
    return memory_write(
        Candidate(kind="fact", content=content, **kwargs), namespace="user:alice", actor="test"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("before", "content", "decision"),
    [
        ([], BERLIN, "stored"),  # every read, under the lock
        ([BERLIN], BERLIN, "duplicate"),  # settled by the content: nothing embedded
        ([BERLIN], "The user's home is in Berlin, Germany.", "duplicate"),  # by the claim
        ([BERLIN], MUNICH, "stored"),  # an update
        ([TEA, TEA], COFFEE, "stored"),  # a conflict: its confirmation read
    ],
)
def test_one_candidate_through_memory_write_is_decided_once(
    before: list[str], content: str, decision: str
) -> None:
    for said in before:
        write(said)
    with decisions() as calls:
        verdict = write(content)
    assert verdict.decision == decision
    assert len(calls) == 1
