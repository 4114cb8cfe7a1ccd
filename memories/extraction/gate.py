"""The steel gate: deterministic validation of candidates before anything touches the database.

Every stage's output (regex, LLM, API) passes through ``validate``. It never guesses and never
calls out: a candidate is either well-formed and accepted (with its tags, title and summary
normalised in place) or rejected with a short snake_case reason code plus detail, e.g.
``"invalid_kind: 'note'"``.

Rules, in the order they are checked:

- ``invalid_kind``: ``kind`` must be one of ``KINDS``.
- ``invalid_content``: content must be a string.
- ``too_long``: content longer than ``MAX_CONTENT_CHARS`` is rejected, never truncated (cutting a
  memory in half changes what it says).
- ``trivial_content``: no letters or digits at all (punctuation, emoji), or only filler words
  ("ok", "thanks", "sounds good").
- ``too_short``: fewer than ``MIN_WORDS`` words or ``MIN_CHARS`` characters (after stripping).
- ``invalid_importance`` / ``invalid_confidence``: a real number within [0, 1]; out-of-range
  values are rejected, not clamped, because they mean the producing stage is broken.
- ``invalid_retention``: ``retention`` is "store" or "reject" (what to do with "reject" is the
  pipeline's business, not the gate's).
- ``missing_procedure_subtype`` / ``invalid_procedure_subtype``: procedures need one of
  ``PROCEDURE_SUBTYPES``.
- ``no_action``: an episode must describe something that happened, so its content needs an
  action verb (see ``has_action``); a former state the model read as one (claim mood "past":
  "The user used to live in Ghent.") happened over time and needs none.
- ``invalid_slot``: a non-empty ``slot`` must be one of ``SLOTS``.
- ``too_many_candidates``: at most ``MAX_CANDIDATES`` candidates are accepted per call (one call
  per message); valid candidates past the cap are rejected. Invalid ones do not use up the cap.

Normalisation of accepted candidates: content stripped; tags lowercased, stripped, de-duplicated,
empties dropped, cut to ``MAX_TAGS`` (the kind itself when none is left); title and summary
stripped and cut (no ellipsis) to ``MAX_TITLE_CHARS`` / ``MAX_SUMMARY_CHARS``; slot and procedure
subtype lowercased; a procedure subtype on a non-procedure is cleared.

The action lexicon used for episodes lives here too; whether a text is a sentence at all (the
guard's fragment check) is ``memories.extraction.sentences.is_sentence``.
"""

from __future__ import annotations

import math
import re

from django.conf import settings

from memories.extraction.claims import PAST_STATE
from memories.extraction.sentences import lexical
from memories.extraction.types import KINDS, PROCEDURE_SUBTYPES, SLOTS, Candidate, Verdict


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_CANDIDATES = 8
MIN_WORDS = 3
MIN_CHARS = 12
# SPACEDUCK_MAX_MEMORY_CONTENT_CHARS (1000): one limit for every memory write, API or extracted.
MAX_CONTENT_CHARS: int = settings.MAX_MEMORY_CONTENT_CHARS
MAX_TITLE_CHARS = 120
MAX_SUMMARY_CHARS = 300
MAX_TAGS = 4

# A message made only of these words carries nothing worth remembering.
FILLER_WORDS = _words("""
    ok okay k kk yes yeah yep yup no nope nah sure fine cool nice great good awesome perfect
    thanks thank thx ty you so much very lot a lol haha hahaha lmao hmm hm uh um oh ah wow
    hi hello hey hiya bye goodbye cya see later morning night evening got it sounds makes sense
    alright right correct exactly indeed agreed true noted understood done please welcome np
    """)

# --- Verb lexicon -----------------------------------------------------------------------------
# For episodes (``has_action``): a token is an action when the lexicon reads it as a form of a
# listed event lemma, or as any past tense or participle ("bought", "relocated", "gone"), or
# it is an unknown word in -ed ("dockerized"). The lexicon (``sentences.lexical``) is what
# tells "hundred", "morning" or "naked" from a verb; whether a text is a sentence at all is
# judged in ``memories.extraction.sentences``.

# Things that happen: the lemmas an episode is built around.
EVENT_VERBS = _words("""
    decide choose start begin finish complete launch release ship deploy publish move relocate
    meet buy purchase sell switch sign join leave quit resign retire hire fire promote graduate
    marry divorce adopt visit travel fly drive go come return arrive depart attend present give
    win lose fail pass break fix build create make write rewrite merge migrate upgrade downgrade
    install uninstall delete remove add cancel book rent pay receive send get take open close
    found announce agree approve reject accept apply interview celebrate call submit review test
    crash recover learn finish watch see try change update rename refactor introduce replace
    discover find notice report file plan schedule postpone reschedule host organize organise
    invite order deliver spend save earn raise fund invest acquire partner renew expire end stop
    pause resume cut drop revert rollback roll onboard lay become bear die lose injure hurt
    celebrate run lead win sign commit push merge tag transfer upload download backup restore
    rebuild redesign decommission archive sunset adopt enroll enrol register subscribe
    unsubscribe pick select elect vote negotiate settle close sue hire lay meet tour
    """)
# Past forms that say a state or a possibility, not that something happened.
_STATE_PASTS = _words("was were had could would should might")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")


def has_action(text: str) -> bool:
    """Whether ``text`` contains an action verb: a form of an event lemma, a past tense or
    participle, or an unknown word in -ed."""
    for word in _TOKEN.findall(text.lower().replace("\u2019", "'")):
        forms = lexical(word)
        if forms.lemmas & EVENT_VERBS:
            return True
        if (forms.vbd or forms.vbn) and word not in _STATE_PASTS:
            return True
        if not forms.known and len(word) >= 5 and word.endswith("ed"):
            return True
    return False


# --- Validation -------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*")
_HAS_WORD_CHAR = re.compile(r"[^\W_]")


def _score_problem(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number"
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        return f"{value!r} (must be within [0, 1])"
    return None


def _problem(candidate: Candidate) -> str | None:
    """The first rule ``candidate`` breaks, as ``"code: detail"``; None when it is valid."""
    if candidate.kind not in KINDS:
        return f"invalid_kind: {candidate.kind!r}"
    if not isinstance(candidate.content, str):
        return f"invalid_content: {type(candidate.content).__name__} is not text"
    content = candidate.content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        return f"too_long: {len(content)} chars (max {MAX_CONTENT_CHARS})"
    if not _HAS_WORD_CHAR.search(content):
        return "trivial_content: no words"
    words = _WORD.findall(content)
    if all(word.lower().replace("\u2019", "'") in FILLER_WORDS for word in words):
        return f"trivial_content: filler {content[:40]!r}"
    if len(words) < MIN_WORDS:
        return f"too_short: {len(words)} words (min {MIN_WORDS})"
    if len(content) < MIN_CHARS:
        return f"too_short: {len(content)} chars (min {MIN_CHARS})"
    for name in ("importance", "confidence"):
        problem = _score_problem(getattr(candidate, name))
        if problem:
            return f"invalid_{name}: {problem}"
    if candidate.retention not in ("store", "reject"):
        return f"invalid_retention: {candidate.retention!r}"
    if candidate.kind == "procedure":
        subtype = (candidate.procedure_subtype or "").strip().lower()
        if not subtype:
            return "missing_procedure_subtype: a procedure needs one of " + ", ".join(
                PROCEDURE_SUBTYPES
            )
        if subtype not in PROCEDURE_SUBTYPES:
            return f"invalid_procedure_subtype: {candidate.procedure_subtype!r}"
    if candidate.kind == "episode" and not (has_action(content) or _former_state(candidate)):
        return "no_action: an episode needs an action verb"
    slot = (candidate.slot or "").strip().lower()
    if slot and slot not in SLOTS:
        return f"invalid_slot: {candidate.slot!r}"
    return None


def _former_state(candidate: Candidate) -> bool:
    return candidate.claim is not None and candidate.claim.mood == PAST_STATE


def _cut(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit].rstrip()


def _normalise(candidate: Candidate) -> None:
    candidate.content = candidate.content.strip()
    tags: list[str] = []
    for tag in candidate.tags or []:
        if not isinstance(tag, str):
            continue
        tag = tag.strip().lower()
        if tag and tag not in tags:
            tags.append(tag)
    candidate.tags = tags[:MAX_TAGS] or [candidate.kind]
    candidate.title = _cut(candidate.title, MAX_TITLE_CHARS)
    candidate.summary = _cut(candidate.summary, MAX_SUMMARY_CHARS)
    candidate.slot = (candidate.slot or "").strip().lower()
    if candidate.kind == "procedure":
        candidate.procedure_subtype = candidate.procedure_subtype.strip().lower()
    else:
        candidate.procedure_subtype = ""


def validate(candidates: list[Candidate]) -> tuple[list[Candidate], list[Verdict]]:
    """Split ``candidates`` into accepted (normalised in place) and rejection verdicts."""
    accepted: list[Candidate] = []
    rejected: list[Verdict] = []
    for candidate in candidates:
        reason = _problem(candidate)
        if reason is None and len(accepted) >= MAX_CANDIDATES:
            reason = f"too_many_candidates: max {MAX_CANDIDATES} per message"
        if reason is not None:
            rejected.append(Verdict(candidate=candidate, decision="rejected", reason=reason))
            continue
        _normalise(candidate)
        accepted.append(candidate)
    return accepted, rejected
