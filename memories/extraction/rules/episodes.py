"""Episodes by rules: what happened to the user or their family, dated or in the past."""

from __future__ import annotations

import re

from memories.extraction import rules_words as W
from memories.extraction.classify import (
    date_phrase,
    find_time_hint,
    is_relative_hint,
    resolve_time_hint,
)
from memories.extraction.rules.build import Context, make_candidate, topic_tag
from memories.extraction.rules.facts import make_fact
from memories.extraction.rules.person import (
    is_participle,
    sentence_case,
    skip_adverbs,
    third_person,
)
from memories.extraction.types import Candidate

# --- episodes -
_EPISODE_SUBJECT = re.compile(r"\b(i|we)\s+", re.IGNORECASE)
# "Our daughter was born in May", "My dad retired last year": milestones of the user's family.
_FAMILY_EVENT = re.compile(
    rf"^(?:my|our)\s+(?:[\w-]+\s+)?(?:{W.FAMILY_EVENT_RELATIONS})\s+(?:just\s+|finally\s+)?"
    rf"(?P<verb>{W.FAMILY_EVENTS})\b",
    re.IGNORECASE,
)
_SUBJECTLESS = re.compile(r"^(?:(?:just|finally|recently|officially)\s+)?([a-z]+)\b", re.IGNORECASE)
_MILESTONES = re.compile(rf"\b(?:{W.MILESTONES})\b", re.IGNORECASE)


_USED_TO_FEEL = re.compile(
    r"^(?:i|we)\s+used\s+to\s+(?:really\s+)?(?:love|like|enjoy|hate|dislike|adore|prefer)\b",
    re.IGNORECASE,
)


def read_episode(clause: str, ctx: Context) -> Candidate | None:
    if _USED_TO_FEEL.match(clause):
        # "I used to love jazz": a feeling that held, not an event (no action to date).
        return make_fact(clause, topic_tag(clause) or "preference", ctx.confidence, importance=None)
    subject, verb = _past_event(clause)
    if subject is None:
        return None
    hint = find_time_hint(clause)
    when = resolve_time_hint(hint, ctx.now) if hint else None
    text = _subject_first(clause) if subject else f"I {clause[0].lower()}{clause[1:]}"
    if hint and is_relative_hint(hint):
        text = _drop_phrase(text, hint)
    content = third_person(text, past=True)
    if hint and is_relative_hint(hint):
        content += f" {date_phrase(hint, when)}" if when else f" ({hint})"
    milestone = bool(_MILESTONES.search(clause))
    tag = "decision" if verb in W.DECISION_VERBS else "event"
    return make_candidate(
        "episode",
        sentence_case(content),
        importance="significant" if milestone or tag == "decision" else "standard",
        confidence=ctx.confidence,
        tags=[tag, *(["milestone"] if milestone else [])],
        time_hint=hint,
        occurred_at=when,
        text=clause,
    )


def _past_event(clause: str) -> tuple[str | None, str]:
    """(subject, verb) when the user, their team or family did something; ("", verb) when
    the subject was dropped ("Moved to Amsterdam in May"); (None, "") otherwise."""
    family = _FAMILY_EVENT.match(clause)
    if family:
        return "family", family["verb"].lower()
    for match in _EPISODE_SUBJECT.finditer(clause):
        words = clause[match.end() :].lower().split()
        verb = skip_adverbs(words)
        if verb in {"have", "has"}:  # "we have just launched", "I've decided": done, so an event
            participle = skip_adverbs(words[words.index(verb) + 1 :])
            if participle in W.EVENT_VERBS - {"had", "got", "been"}:
                return match.group(1).lower(), participle
        if verb in W.EVENT_VERBS and _is_event_use(verb, words):
            return match.group(1).lower(), verb
        if _is_dated_past(verb, words, clause):
            return match.group(1).lower(), verb
        break  # only the first subject: "after I left, we ..." is too ambiguous for rules
    # "Moved to Amsterdam in May": people drop the "I"; three words at least, so "Got it" is not.
    lead = _SUBJECTLESS.match(clause)
    if lead and len(clause.split()) >= 3 and lead.group(1).lower() in W.SUBJECTLESS_EVENTS:
        return "", lead.group(1).lower()
    return None, ""


def _is_dated_past(verb: str, words: list[str], clause: str) -> bool:
    """Any past-tense action with a date is an event: "I handed in my notice this morning",
    "I was diagnosed with ADHD last year". States ("I was tired yesterday") are not."""
    if verb in {"was", "were"}:
        after = skip_adverbs(words[words.index(verb) + 1 :])
        return after in W.PASSIVE_EVENTS or (is_participle(after) and bool(find_time_hint(clause)))
    if verb in W.STATIVE_PAST:
        return False
    return is_participle(verb) and bool(find_time_hint(clause))


def _is_event_use(verb: str, words: list[str]) -> bool:
    """Rule out verbs that are only events in some uses ("had a baby" yes, "had a cold" no)."""
    after = words[words.index(verb) + 1 : words.index(verb) + 3] if verb in words else []
    if verb == "had":
        return bool(after) and after[-1] in W.HAD_EVENTS
    if verb == "got":
        return bool(after) and (after[0].endswith("ed") or after[0] in W.GOT_EVENT_STARTS)
    if verb == "went":
        return bool(after) and after[0] in W.WENT_EVENT_STARTS
    if verb == "ended":
        return after[:1] == ["up"]
    return True


def _subject_first(clause: str) -> str:
    """ "After a long search we picked X" -> "we picked X after a long search": the canonical
    sentence starts with who did it."""
    match = _EPISODE_SUBJECT.search(clause)
    if not match or match.start() == 0:
        return clause
    lead = clause[: match.start()].strip(" ,")
    if find_time_hint(lead) == lead or re.search(r"\b(?:my|our)\s*$", lead, re.IGNORECASE):
        return clause  # "Yesterday I ..." is handled as a date; "my wife and I" is a subject
    if re.search(r"\band\s*$", lead, re.IGNORECASE):
        return clause
    return f"{clause[match.start() :]} {lead[0].lower()}{lead[1:]}"


def _drop_phrase(text: str, phrase: str) -> str:
    pattern = re.compile(rf"\s*,?\s*\b{re.escape(phrase)}\b\s*,?", re.IGNORECASE)
    return " ".join(pattern.sub(" ", text, count=1).split()).strip(" ,")
