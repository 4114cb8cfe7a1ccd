"""The deterministic part of extraction: from one message to the candidates worth keeping.

``propose`` runs every stage that needs no database: the guard's skip rules, the
firewall on the message as a whole, the regex stage, the classifier (LLM or
heuristic), the steel gate and the firewall on each candidate
(memories.extraction.firewall: guard, secrets, reported text, injection, in that
order). Every candidate leaves a Verdict, so the extraction record can say what
happened to each and why. Dedup and contradiction handling, which need the
database, happen afterwards (memories.write.dedup).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from memories.extraction import clauses, conversation, firewall, gate, guard, regex, understanding
from memories.extraction.claims import AFFIRMED, NEGATED, claim_of
from memories.extraction.classify import candidates_from_json
from memories.extraction.classify_contract import CLASSIFY_PROMPT, CLASSIFY_SCHEMA, SCHEMA_NAME
from memories.extraction.clause_candidates import refine
from memories.extraction.reported import doubt_about
from memories.extraction.rules import reading as rules
from memories.extraction.rules.build import make_candidate
from memories.extraction.spelling import read_chat
from memories.extraction.types import CONFIDENCE, Candidate, Source, Verdict
from spaceduck.core import parse
from spaceduck.core.failpoints import failpoint
from spaceduck.core.providers import get_chat
from spaceduck.core.providers.chat.base import ChatProvider
from spaceduck.core.providers.errors import ProviderError

logger = logging.getLogger(__name__)


def warm() -> None:
    """Load what extraction loads once per process now (worker start-up), not inside the
    first message's time: the firewall's tables and, when messages are read offline (no
    chat model), the parse (~1.2 s, ~50 MB). Missing parser weights are said here and
    left to each message, which the rules then read (``understanding.read_message``)."""
    firewall.warm()
    if get_chat().has_model:
        return
    try:
        parse.pipeline()
    except ImproperlyConfigured as exc:
        logger.warning("the parse is not loaded: %s", exc)


def _rejected(candidates: Sequence[Candidate], reason: str) -> list[Verdict]:
    return [Verdict(candidate=c, decision="rejected", reason=reason) for c in candidates]


def _merge(regex_found: list[Candidate], classified: list[Candidate]) -> list[Candidate]:
    """Regex wins for identity slots; the classifier adds everything else."""
    slots = {c.slot for c in regex_found if c.slot}
    return regex_found + [c for c in classified if not (c.slot and c.slot in slots)]


def _without_restated(candidates: list[Candidate]) -> tuple[list[Candidate], list[Verdict]]:
    """Drop a plain fact that only restates a kept slot ("The user is a carpenter by trade"
    beside role "carpenter"): the slot says it, and supersedes correctly when it changes.
    Drop too a candidate that names its topic only by a pronoun when another candidate of
    the message says the same amounts in full ("The user has increased it to 10 km now."
    beside "The user runs 10 km every morning now.")."""
    values = [_slot_value(c) for c in candidates if c.slot]
    keep: list[Candidate] = []
    dropped: list[Verdict] = []
    for candidate in candidates:
        if (candidate.kind == "fact" and _restates(candidate, values)) or _said_in_full(
            candidate, candidates
        ):
            dropped.append(
                Verdict(candidate=candidate, decision="rejected", reason="duplicate_candidate")
            )
        else:
            keep.append(candidate)
    return keep, dropped


_SLOT_FRAME = frozenset(
    [
        "the",
        "user",
        "user's",
        "is",
        "works",
        "as",
        "at",
        "lives",
        "in",
        "name",
        "years",
        "old",
        "email",
        "phone",
        "number",
        "birthday",
        "pronouns",
        "are",
        "a",
        "an",
    ]
)


def _slot_value(candidate: Candidate) -> frozenset[str]:
    words = re.findall(r"[\w@.+-]+", candidate.content.casefold())
    return frozenset(w.strip(".") for w in words if w.strip(".") not in _SLOT_FRAME)


def _restates(candidate: Candidate, values: list[frozenset[str]]) -> bool:
    """All of a slot's value and at most one word more ("The user is a carpenter by trade");
    "The user is a nurse on night shifts" says more than role "nurse" and stays."""
    if candidate.slot:
        return False
    text = candidate.content.casefold()
    words = _slot_value(candidate)
    return any(
        value and all(word in text for word in value) and len(words - value - _FILLER) <= 1
        for value in values
    )


_PRONOUN_TOPIC = re.compile(r"\b(?:it|that|this|them)\b", re.IGNORECASE)
_AMOUNT = re.compile(r"\b\d+(?:[.,]\d+)?(?:\s*[a-z]+)?", re.IGNORECASE)


def _said_in_full(candidate: Candidate, candidates: list[Candidate]) -> bool:
    if candidate.slot or not _PRONOUN_TOPIC.search(candidate.content):
        return False
    amounts = [a.lower() for a in _AMOUNT.findall(candidate.content)]
    return bool(amounts) and any(
        other is not candidate
        and not _PRONOUN_TOPIC.search(other.content)
        and all(amount in other.content.lower() for amount in amounts)
        for other in candidates
    )


_FILLER = frozenset(
    [
        "their",
        "them",
        "they",
        "has",
        "have",
        "been",
        "for",
        "of",
        "on",
        "by",
        "with",
        "from",
        "to",
        "the",
    ]
)


def _without_ended_and_replaced(
    candidates: list[Candidate],
) -> tuple[list[Candidate], list[Verdict]]:
    """Drop an ending ("left Google") when the same message says what replaced it ("joined
    Stripe": works at Stripe): the new value supersedes the old one anyway, and the
    ending alone would be a second memory of one change."""
    claims = [claim_of(c.kind, c.content, c.claim) for c in candidates]
    new = {claim.key for claim in claims if claim is not None and claim.polarity == AFFIRMED}
    keep: list[Candidate] = []
    dropped: list[Verdict] = []
    for candidate, claim in zip(candidates, claims, strict=True):
        if claim is not None and claim.polarity == NEGATED and claim.key in new:
            why = "duplicate_candidate: the same message says what replaced it"
            dropped.append(Verdict(candidate=candidate, decision="rejected", reason=why))
        else:
            keep.append(candidate)
    return keep, dropped


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


def _guarded(candidates: list[Candidate], source: Source) -> tuple[list[Candidate], list[Verdict]]:
    keep: list[Candidate] = []
    verdicts: list[Verdict] = []
    for candidate in candidates:
        reason = firewall.screen(candidate, source)
        if reason is None:
            keep.append(candidate)
        else:
            verdicts.append(Verdict(candidate=candidate, decision="rejected", reason=reason))
    return keep, verdicts


def classify(chat: ChatProvider, *, text: str, role: str) -> list[Candidate]:
    """The classification stage: the model's answer when the provider has one, else the
    offline rules (memories.extraction.rules). ProviderError when the model fails or
    answers off-schema, so the task queue retries instead of storing "nothing"."""
    if not text.strip():
        return []
    if not chat.has_model:
        return rules.classify_message(text, role, timezone.now())
    # The date, so that the model can write "until Friday" as valid_until (ISO 8601).
    today = timezone.localdate()
    answer = chat.complete_json(
        system=CLASSIFY_PROMPT,
        user=f"Message role: {role}\nMessage date: {today:%Y-%m-%d (%A)}\nMessage:\n{text}",
        schema_name=SCHEMA_NAME,
        schema=CLASSIFY_SCHEMA,
    )
    try:
        candidates = candidates_from_json(answer)
    except ProviderError as exc:
        raise ProviderError(f"{chat.name} chat (model {chat.model}): {exc}") from exc
    for candidate in candidates:
        candidate.stage = f"model {chat.model}"  # what ran, as the pages show it
    return candidates


def _understood(source: Source, text: str, chat: ChatProvider) -> understanding.Reading:
    """The parse's statements of a user's message (offline), and the text left to the rules;
    with a model, the model reads it all (nothing is read here)."""
    if source.role != "user" or chat.has_model or not text.strip():
        return understanding.Reading(rest=text)
    return understanding.read_message(text, timezone.now(), source.before)


def _with_the_conversation(
    source: Source, text: str, chat: ChatProvider
) -> tuple[str, list[Candidate]]:
    """The message read with the turns before it (offline, a user's): a correction rewrites
    the memory it corrects ("make it seven" -> "... for seven people", replacing the old);
    a short answer is read as the statement it makes ("Ghent." to "Which city are you
    in?" -> "I am in Ghent."). Otherwise the text as it is."""
    before = source.before
    if before is None or source.role != "user" or chat.has_model or not text.strip():
        return text, []
    text = conversation.outside_the_role(before.turns(), text)
    if not text.strip():
        return "", []  # said in a role-play the user set up: the role's, not the user's
    correction = conversation.correction_in(text)
    if correction is not None:
        rows = before.memories()
        kinds = {memory_id: kind for memory_id, kind, _ in rows}
        rewrites = conversation.corrected([(i, c) for i, _, c in rows], correction)
        if rewrites:
            return "", [_rewritten(r, kinds[r.memory_id]) for r in rewrites]
    if conversation.says_a_number(text):  # "cut down to two a day": a count changed
        rows = before.memories()
        kinds = {memory_id: kind for memory_id, kind, _ in rows}
        update = conversation.count_update(text, [(i, c) for i, _, c in rows])
        if update is not None:
            return "", [_rewritten(update, kinds[update.memory_id])]
    if conversation.could_answer(text):  # the turns are read only then: a query
        turns = before.turns()
        if turns and turns[-1][0] == "assistant":
            said = conversation.answer_to(turns[-1][1], text)
            if said and said.startswith("The user"):  # already the memory's sentence
                return "", [_answer(said)]
            if said:
                return said, []
    return text, []


def _answer(content: str) -> Candidate:
    candidate = make_candidate(
        "fact", content, importance="standard", confidence=CONFIDENCE["stated"], tags=[]
    )
    candidate.stage = "parse"
    return candidate


def _rewritten(rewrite: conversation.Rewrite, kind: str) -> Candidate:
    candidate = make_candidate(
        kind, rewrite.content, importance="standard", confidence=CONFIDENCE["stated"], tags=[]
    )
    candidate.replaces = [rewrite.memory_id]
    candidate.stage = "parse"
    return candidate


def _candidates(read: understanding.Reading) -> list[Candidate]:
    out = []
    for statement in read.statements:
        candidate = make_candidate(
            statement.kind,
            statement.content,
            importance="standard",
            confidence=CONFIDENCE["stated"],
            tags=[],
            text=statement.sentence,
        )
        candidate.claim = statement.claim
        candidate.valid_from = statement.validity.valid_from
        candidate.valid_until = statement.validity.valid_until
        candidate.occurred_at = statement.occurred_at
        candidate.ends = statement.ends
        candidate.stage = "parse"
        out.append(candidate)
    return out


def propose(source: Source, chat: ChatProvider) -> tuple[list[Candidate], list[Verdict]]:
    """The candidates to store (in order) and a verdict for every one that was dropped.

    Raises ProviderError when the classifier fails: a failed classification is
    retried by the task queue, never turned into "nothing to remember".
    """
    skip = guard.skip_reason(source)
    if skip == "empty" and source.text.strip():
        # Nothing but recalled/<system> blocks: nothing to learn, but say so if it was an attack.
        reason = firewall.screen_message(source)
        if reason is not None:
            return [], _rejected([Candidate(kind="", content="")], reason)
    if skip is not None:
        return [], [
            Verdict(candidate=Candidate(kind="", content=""), decision="skipped", reason=skip)
        ]
    text = guard.strip_recalled(source.text)
    verdicts: list[Verdict] = []
    text, rewrites = _with_the_conversation(source, text, chat)
    read = _understood(source, text, chat)
    verdicts += [Verdict(Candidate(kind="", content=""), "fallback", note) for note in read.notes]
    rest = read.rest
    # Slots are read from the chat spelling repaired ("im jonas", "my nmae is"); values as typed.
    found = regex.extract(read_chat(rest)) if source.role == "user" else []
    failpoint("extraction.before_classify")
    classified = classify(chat, text=rest if not chat.has_model else text, role=source.role)
    merged = _merge(found, [*rewrites, *_candidates(read), *classified])
    if not chat.has_model and source.role == "user":
        # The offline rules' second pass: statements no rule recognised, read by structure.
        merged = refine(merged + clauses.propose(rest, merged, timezone.now()))
    candidates, dropped = _by_retention(merged)
    verdicts += dropped
    reason = firewall.screen_message(source)
    if reason is not None:
        # Refused as a whole: the record says why even when no candidate was proposed.
        refused = candidates or [Candidate(kind="", content="")]
        return [], verdicts + _rejected(refused, reason)
    candidates, gate_verdicts = gate.validate(candidates)
    candidates, guard_verdicts = _guarded(candidates, source)
    candidates, restated = _without_restated(candidates)
    candidates, replaced = _without_ended_and_replaced(candidates)
    restated += replaced
    for candidate in candidates:
        candidate.doubt = candidate.doubt or doubt_about(candidate.content, text)
    return candidates, verdicts + gate_verdicts + guard_verdicts + restated
