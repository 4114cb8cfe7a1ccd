"""What happens to a candidate memory: one pure decision over what was read about it.

``memories.write.dedup`` gathers (the same content, the live facts with the claim's holder
and predicate, the identity slot's holders, the nearest vectors, the arbiter's verdicts,
the re-reads under the namespace's write lock), ``decide`` decides, and dedup applies the
decision in one transaction. Nothing here reads the database or calls a provider: an
outcome is a function of its facts (tests/memories/test_decide.py states them as a table).

Exactly one of five outcomes; the first rule that matches wins, in this order:

- ignore, nothing to do: the task's write budget is spent; this message already produced
  this memory (a re-run after a crash); a duplicate of a memory this message produced;
  the message was erased while it was being extracted.
- duplicate, the memory is known already (it is touched, nothing is stored): the same
  content; the same claim restated in other words ("berlin" / "berlin, germany"), facts
  only (an episode is an event with its own date); a near neighbour (cosine at
  DEDUP_THRESHOLD or more) about the same thing, with the same meaning-carrying tokens,
  looked for only when no claim or slot is replaced. Checked first on what was read
  before the lock, then on what was written meanwhile.
- update: the candidate supersedes every live fact of the same holder and predicate with
  another value or polarity (a denial of one value leaves another standing), every other
  holder of its identity slot, and each same-topic memory the arbiter says it contradicts.
- conflict, a person decides (the conflict inbox): it would replace something but the new
  statement may not be meant (a stage's doubt), is hedged (a candidate itself), or replaces
  a confirmed memory (said again, or a person's decision) without a word that anything
  changed; or the arbiter is unsure. Nothing is replaced: each pair is asked about.
- insert: a new memory (a candidate when doubted).

Live facts about something else (another holder, another predicate) are never a
duplicate, never replaced and never sent to the arbiter.

Gather asks three questions before it reads more, each answered with the rules ``decide``
applies (so the two cannot disagree): ``settled`` (what was read fixes the outcome: no
embedding after an exact duplicate or a restated claim, no arbiter after a near duplicate,
no lock taken), ``arbiter_band`` (the neighbours the arbiter is asked about) and
``to_confirm`` (the memories whose confirmation by a person matters). ``decide`` itself
runs once per candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from django.conf import settings

from memories.extraction.claims import ABOUT, AFFIRMED, Claim
from memories.extraction.types import CONFIDENCE

Outcome = Literal["insert", "duplicate", "update", "conflict", "ignore"]
MAX_ARBITRATIONS = 5  # same-topic memories the arbiter is asked about per candidate
SAID_AGAIN, BY_A_PERSON = "said again", "confirmed by a person"
RERUN = "this message already produced it (a re-run)"
EXACT = "exact duplicate (content hash)"


# --- Comparing two claims --------------------------------------------------------------------


def same_thing(a: Claim, b: Claim) -> bool:
    """Whether the two claims are about one thing (so one value at a time)."""
    if a.key != b.key:
        return False
    if a.attribute != "prefers":
        return True  # "prefers:drink": one preference among drinks
    # "prefers tea" and "prefers coffee over tea" are about tea against coffee; "prefers
    # window seats" is about something else.
    return bool(({a.value} | a.others) & ({b.value} | b.others))


def conflicts(new: Claim, old: Claim) -> bool:
    """Whether both cannot hold at once, so the newer replaces the older: another value
    of the same thing, both affirmed ("lives in Munich" / "lives in Berlin"), or the same
    value said the other way ("no longer likes jazz" / "loves jazz"). A denial of one
    value leaves another standing ("no longer lives in Berlin" / "lives in Munich")."""
    if not same_thing(new, old) or restates(new, old):
        return False
    if new.attribute.startswith(ABOUT):
        # "plays the piano" / "stopped playing the piano", or "gave up the piano" (any verb,
        # "*"); "plays tennis" beside "watches tennis" is two things, both held.
        return new.polarity != old.polarity and _same_doing(new.value, old.value)
    if new.polarity == old.polarity:
        return new.polarity == AFFIRMED
    # "is single" (no partner at all) against "is dating Sam"; else the same value.
    return not new.value or not old.value or same_value(_unstaged(new.value), _unstaged(old.value))


def restates(new: Claim, old: Claim) -> bool:
    """The same thing with the same value and polarity ("Berlin" and "Berlin, Germany");
    an ending restated in other words ("gave up the piano" / "stopped playing the piano")."""
    if new.attribute.startswith(ABOUT) and same_thing(new, old):
        ended = new.polarity != AFFIRMED
        return new.polarity == old.polarity and (
            new.value == old.value or (ended and _same_doing(new.value, old.value))
        )
    return (
        same_thing(new, old) and new.polarity == old.polarity and same_value(new.value, old.value)
    )


def _same_doing(a: str, b: str) -> bool:
    """The same verb, or "*" (whatever the holder did with it: "gave up the trumpet")."""
    return a == b or "*" in (a, b)


def same_value(a: str, b: str) -> bool:
    """Equal, or one names the other more precisely at a comma ("berlin" / "berlin, germany")."""
    if a == b:
        return True
    first_a, first_b = a.split(",")[0].strip(), b.split(",")[0].strip()
    return bool(first_a) and first_a == first_b


_STAGE = re.compile(r"\s*\([^)]*\)$")


def _unstaged(value: str) -> str:
    """The value without its stage ("sam (engaged)" -> "sam"): breaking up with Sam ends
    whatever stage it had reached."""
    return _STAGE.sub("", value)


# --- What was gathered -----------------------------------------------------------------------


# The statement says that something changed: the user says it last, on purpose.
_CHANGE = re.compile(
    r"\b(?:now|nowadays|these days|lately|recently|any ?more|no longer|moved|moving|switched|"
    r"switching|changed?|changing|actually|instead|since|started|stopped|quit|gave up|new|"
    r"updated?|from now on|increased|decreased|reduced|became|become|used to|corrections?|"
    r"wrong|mistake|meant)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class New:
    """The candidate, as the decision sees it."""

    kind: str
    claim: Claim | None = None
    slot: str = ""
    confidence: float = CONFIDENCE["stated"]
    doubt: str = ""  # why the user may not mean it (a stage's), "" when nothing
    content: str = ""
    context: str = ""  # where it was learnt (Memory.context: the messages it came from)

    @cached_property
    def changed(self) -> bool:
        """It or its context says that something changed ("now", "moved", "actually").
        Read only when it decides (a replacement), once: ~50 us on a message."""
        return bool(_CHANGE.search(f"{self.content} {self.context}"))


@dataclass(frozen=True)
class Held:
    """A live memory the candidate is weighed against, as read."""

    memory_id: int
    claim: Claim | None = None
    confidence: float = CONFIDENCE["stated"]
    # How it was confirmed: SAID_AGAIN, BY_A_PERSON, "" for neither (or not read: it did
    # not matter, see ``to_confirm``).
    confirmed: str = ""
    slot: str = ""
    same_message: bool = False  # the message being extracted stored it


@dataclass(frozen=True)
class Neighbour:
    """A live memory near the candidate's vector (at the topic or the dedup threshold,
    whichever is lower, or above)."""

    memory: Held
    cosine: float
    # The meaning-carrying tokens in which the two differ, sorted (read at the dedup
    # threshold or above: only there do they decide).
    differs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Arbitration:
    """The arbiter's verdict on the candidate against a same-topic memory."""

    memory: Held
    cosine: float
    verdict: str  # "contradiction", "unsure", or another (the memories are compatible)
    reason: str
    arbiter: str  # the chat provider's name


@dataclass(frozen=True)
class Locked:
    """Read again under the namespace's write lock: what another worker wrote meanwhile."""

    erased: bool = False  # the message was erased while it was being extracted
    raced: Held | None = None  # a live memory with the same content
    holders: tuple[Held, ...] = ()  # the live facts of the claim's holder and predicate
    late: tuple[Neighbour, ...] = ()  # neighbours among the vectors written since the search


@dataclass(frozen=True)
class Facts:
    """Everything the decision weighs. What was not read is empty: gather reads in this
    order and stops where ``settled`` says the rest cannot change the outcome."""

    new: New
    budget_exhausted: bool = False
    earlier: int | None = None  # the memory this message already stored with this content
    exact: Held | None = None  # the newest live memory with this content
    holders: tuple[Held, ...] = ()  # live facts of the claim's holder and predicate, oldest first
    slotted: tuple[Held, ...] = ()  # the live holders of the candidate's identity slot
    corrects: tuple[Held, ...] = ()  # the live memories the user's correction rewrites
    named: tuple[Held, ...] = ()  # the holder's live facts naming what an ending ends
    neighbours: tuple[Neighbour, ...] = ()  # nearest first
    arbitrations: tuple[Arbitration, ...] = ()
    locked: Locked = Locked()


@dataclass(frozen=True)
class Decision:
    """What happens to the candidate, and why (the Verdict's words)."""

    outcome: Outcome
    reason: str
    verdict: str  # the Verdict's decision: stored, duplicate, already_extracted, rejected
    matched: int | None = None  # duplicate, ignore: the memory it matched
    cosine: float | None = None  # a near duplicate's
    supersede: tuple[tuple[int, str], ...] = ()  # update: (memory id, why)
    ask: tuple[tuple[int, str], ...] = ()  # conflict: (memory id, why), for the inbox
    not_duplicates: tuple[dict[str, object], ...] = ()  # near neighbours with other tokens
    arbitrations: tuple[dict[str, object], ...] = ()  # the arbiter's verdicts


# --- Deciding --------------------------------------------------------------------------------


def decide(facts: Facts) -> Decision:
    """What happens to the candidate (see the module's docstring)."""
    settled = _settled(facts)
    if settled is not None:
        return settled
    new = facts.new
    supersede = _replacing(facts)
    replaced = _replaced(facts)
    not_duplicates = [] if replaced else _near(new, _undecided(facts, replaced))[1]
    unsure = [
        (a.memory, f"the {a.arbiter} arbiter is unsure: {a.reason}")
        for a in facts.arbitrations
        if a.verdict == "unsure"
    ]
    supersede, ask = _who_decides(new, supersede, unsure)
    reason = "superseded older memory" if supersede else "new memory"
    outcome: Outcome = "update" if supersede else "insert"
    if ask:
        reason, outcome = "waits for a person: the conflict inbox", "conflict"
    elif new.doubt:
        reason = f"a candidate: the user may not mean it ({new.doubt})"
    return Decision(
        outcome,
        reason,
        "stored",
        supersede=tuple((held.memory_id, why) for held, why in supersede),
        ask=tuple((held.memory_id, why) for held, why in ask),
        not_duplicates=tuple(not_duplicates),
        arbitrations=tuple(_verdict(a) for a in facts.arbitrations),
    )


def settled(facts: Facts) -> bool:
    """Whether what was read fixes the outcome (nothing to do, or a duplicate): what is
    read next cannot change it."""
    return _settled(facts) is not None


def arbiter_band(facts: Facts) -> tuple[Neighbour, ...]:
    """The neighbours the arbiter is asked about: up to MAX_ARBITRATIONS at the topic
    threshold or above, less those the claims decided, those of another identity slot and
    those about something else."""
    new = facts.new
    near = _undecided(facts, _replaced(facts))
    band = [n for n in near if n.cosine >= settings.TOPIC_THRESHOLD][:MAX_ARBITRATIONS]
    return tuple(
        n
        for n in band
        if not (n.memory.slot and new.slot and n.memory.slot != new.slot)  # another subject
        and not _other_thing(new, n.memory)
    )


def to_confirm(facts: Facts) -> tuple[int, ...]:
    """The memories the candidate would replace whose confirmation by a person decides
    whether a person is asked first (none when the statement is doubted, hedged, or says
    that something changed, or when the outcome is settled)."""
    new = facts.new
    if new.doubt or _hedged(new) or _settled(facts) is not None:
        return ()
    unread = tuple(held.memory_id for held, _ in _replacing(facts) if not held.confirmed)
    return () if not unread or new.changed else unread


def _settled(facts: Facts) -> Decision | None:
    """The ignore and duplicate rules, in the order of the reads."""
    new, locked = facts.new, facts.locked
    if facts.budget_exhausted:
        return Decision("ignore", "budget_exhausted", "rejected")
    if facts.earlier is not None:
        return Decision("ignore", RERUN, "already_extracted", matched=facts.earlier)
    if facts.exact is not None:
        return _duplicate(facts.exact, EXACT)
    restated = _restated(new, facts.holders)
    if restated is not None:
        return restated
    replaced = _replaced(facts)
    near = None if replaced else _near(new, _undecided(facts, replaced))[0]
    if near is not None:
        return _near_duplicate(near)
    if locked.erased:
        # spaceduck.ops.erasure took the same lock: nothing of the message may come back.
        return Decision("ignore", "source_erased", "rejected")
    if locked.raced is not None:
        return _duplicate(locked.raced, EXACT)
    restated = _restated(new, locked.holders)
    if restated is not None:
        return restated
    late = _near(new, locked.late)[0]
    return None if late is None else _near_duplicate(late)


def _duplicate(held: Held, why: str, cosine: float | None = None) -> Decision:
    if held.same_message:
        # A re-run of the same message: it already produced this memory; change nothing.
        return Decision("ignore", why, "already_extracted", matched=held.memory_id)
    return Decision("duplicate", why, "duplicate", matched=held.memory_id, cosine=cosine)


def _near_duplicate(near: Neighbour) -> Decision:
    return _duplicate(near.memory, f"near duplicate (cosine {near.cosine:.3f})", near.cosine)


def _about(new: New, held: tuple[Held, ...]) -> list[Held]:
    """Those of ``held`` about the same thing as the candidate's claim."""
    claim = new.claim
    if claim is None:
        return []
    return [h for h in held if h.claim is not None and same_thing(claim, h.claim)]


def _restated(new: New, held: tuple[Held, ...]) -> Decision | None:
    """A duplicate of the first of ``held`` that the candidate (a fact) restates."""
    if new.claim is None or new.kind != "fact":
        return None  # an episode is an event with its own date, never the fact it ends
    for h in _about(new, held):
        if h.claim is not None and restates(new.claim, h.claim):
            why = f"restates memory {h.memory_id} ({_describe(new.claim)}, the same value)"
            return _duplicate(h, why)
    return None


def _replaced(facts: Facts) -> list[tuple[Held, str]]:
    """What the candidate's claim and slot replace (read before the lock): every fact
    about the same thing with another value or polarity, then the slot's holders."""
    new = facts.new
    supersede = [
        (h, f"{_describe(h.claim)}: a new value or polarity")
        for h in _about(new, facts.holders)
        if new.claim is not None and h.claim is not None and conflicts(new.claim, h.claim)
    ]
    gone = {h.memory_id for h, _ in supersede}
    supersede += [
        (h, f"slot '{new.slot}' has a new value") for h in facts.slotted if h.memory_id not in gone
    ]
    gone = {h.memory_id for h, _ in supersede}
    supersede += [(h, "the user corrected it") for h in facts.corrects if h.memory_id not in gone]
    gone = {h.memory_id for h, _ in supersede}
    supersede += [(h, "it names what ended") for h in facts.named if h.memory_id not in gone]
    return supersede


def _replacing(facts: Facts) -> list[tuple[Held, str]]:
    """Everything the candidate would replace: ``_replaced``, what the arbiter says it
    contradicts, and the facts about the same thing stored meanwhile (under the lock)."""
    new = facts.new
    supersede = _replaced(facts)
    supersede += [
        (a.memory, f"contradicted ({a.arbiter} arbiter: {a.reason})")
        for a in facts.arbitrations
        if a.verdict == "contradiction"
    ]
    known = {h.memory_id for h, _ in supersede}
    supersede += [
        (h, f"{_describe(h.claim)}: a new value or polarity")
        for h in _about(new, facts.locked.holders)
        if h.memory_id not in known
        and new.claim is not None
        and h.claim is not None
        and conflicts(new.claim, h.claim)
    ]
    return supersede


def _undecided(facts: Facts, replaced: list[tuple[Held, str]]) -> list[Neighbour]:
    """The neighbours the claims left open: not about the same thing as the candidate's
    claim (replaced, or compatible: "no longer lives in Berlin" beside "lives in Munich"),
    and not replaced (a slot's holders)."""
    decided = {h.memory_id for h in _about(facts.new, facts.holders)}
    decided |= {h.memory_id for h, _ in replaced}
    return [n for n in facts.neighbours if n.memory.memory_id not in decided]


def _near(
    new: New, neighbours: list[Neighbour] | tuple[Neighbour, ...]
) -> tuple[Neighbour | None, list[dict[str, object]]]:
    """The first neighbour at the dedup threshold that states the same thing, and those at
    the threshold whose meaning-carrying tokens differ (why they are not, for the verdict).
    A neighbour about something else is never a duplicate, whatever the cosine."""
    not_duplicates: list[dict[str, object]] = []
    for n in neighbours:
        if n.cosine < settings.DEDUP_THRESHOLD or _other_thing(new, n.memory):
            continue
        if not n.differs:
            return n, not_duplicates
        not_duplicates.append(
            {
                "memory_id": n.memory.memory_id,
                "cosine": round(n.cosine, 4),
                "differs": list(n.differs[:10]),
            }
        )
    return None, not_duplicates


def _other_thing(new: New, held: Held) -> bool:
    """Both claim something, about different things (my sister's birthday, my brother's):
    never one memory, whatever the cosine or the arbiter."""
    if new.claim is None or held.claim is None:
        return False
    if ABOUT in (new.claim.attribute[: len(ABOUT)], held.claim.attribute[: len(ABOUT)]):
        # What someone does or has is read from the words ("runs Postgres 15", "runs
        # Postgres 16"): other words may still be the same thing; the arbiter decides.
        return False
    return not same_thing(new.claim, held.claim)


def _verdict(a: Arbitration) -> dict[str, object]:
    return {
        "memory_id": a.memory.memory_id,
        "cosine": round(a.cosine, 4),
        "verdict": a.verdict,
        "reason": a.reason,
        "arbiter": a.arbiter,
    }


def _hedged(new: New) -> bool:
    return new.confidence < settings.ACTIVE_CONFIDENCE


def _unsure_of(new: New, held: Held) -> str:
    """Why replacing ``held`` with the candidate needs a person ("" when it does not):
    the user may not mean the new statement, it is hedged, or the old memory was confirmed
    (said again, or approved or edited by a person) and the new statement, said once, does not
    say that anything changed."""
    if new.doubt:
        return f"the new statement may not be meant ({new.doubt})"
    if _hedged(new):
        # It waits as a candidate itself: replacing now would leave agents neither value.
        return f"the new statement is hedged (confidence {new.confidence:.2f})"
    if new.changed:
        return ""
    if held.confirmed and held.confidence > new.confidence - 1e-6:
        return (
            f"memory {held.memory_id} was {held.confirmed}; the new statement was said once "
            "and does not say that anything changed"
        )
    return ""


def _who_decides(
    new: New, supersede: list[tuple[Held, str]], unsure: list[tuple[Held, str]]
) -> tuple[list[tuple[Held, str]], list[tuple[Held, str]]]:
    """(what the engine supersedes, what it asks a person about). When it is unsure about
    one of them, nothing is replaced without a person: each pair goes to the inbox."""
    doubts = [why for held, _ in supersede if (why := _unsure_of(new, held))]
    if not doubts and not unsure:
        return supersede, []
    why = doubts[0] if doubts else unsure[0][1]
    ask = [(held, f"{why}; it would replace it: {reason}") for held, reason in supersede]
    asked = {held.memory_id for held, _ in ask}
    return [], ask + [(held, reason) for held, reason in unsure if held.memory_id not in asked]


def _describe(claim: Claim | None) -> str:
    return "" if claim is None else f"{claim.subject} {claim.attribute}"
