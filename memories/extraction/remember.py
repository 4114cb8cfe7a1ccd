"""The regex stage's "remember (that) ..." requests: the clause as a fact in the third
person, "remember to always/never ..." as a procedure."""

from __future__ import annotations

import re

from memories.extraction import regex_words as W
from memories.extraction.guard import starts_like_question
from memories.extraction.rules.person import third_singular
from memories.extraction.sentences import is_sentence
from memories.extraction.slots import FLAGS, Hit, sentence_end
from memories.extraction.types import CONFIDENCE, IMPORTANCE, Candidate

# --- "remember that ..." -----------------------------------------------------------------------

_REMEMBER = re.compile(r"\b(?:remember|(?:don't|do\s+not|never)\s+forget)\b", FLAGS)
_REMEMBER_LEAD = re.compile(rf"^(?:(?:{W.REMEMBER_LEADS})[\s,!.:-]*)*$", FLAGS)
_COURTESY_TAIL = re.compile(rf"(?:[\s.!?]*,\s*(?:{W.COURTESIES}))?[\s.!?]*$", FLAGS)
_PROCEDURE = re.compile(
    r"^(?:that\s+)?(?:(?:you\s+(?:should|must|need\s+to|have\s+to|will|are\s+to)|to)\s+)?"
    r"(?P<adverb>always|never)\s+(?P<body>\S.*)$",
    FLAGS | re.DOTALL,
)
_NOT_TO = re.compile(r"^(?:not\s+to|to\s+not|to\s+never)\s+(?P<body>\S.*)$", FLAGS | re.DOTALL)

_ADVERBS = rf"(?:(?:{W.ADVERBS}|[a-z]{{3,}}(?<!p)ly)\s+)*"
_FIRST_PERSON_FIXED = tuple(
    (re.compile(pattern, FLAGS), replacement)
    for pattern, replacement in (
        (r"\bI\s+am\b", "the user is"),
        (r"\bI'm\b", "the user is"),
        (r"\bI've\b", "the user has"),
        (r"\bI\s+haven't\b", "the user hasn't"),
        (r"\bI\s+have\b", "the user has"),
        (r"\bI\s+don't\b", "the user doesn't"),
        (r"\bI\s+do\s+not\b", "the user does not"),
        (r"\bI\s+do\b", "the user does"),
        (r"\bI'll\b", "the user will"),
        (r"\bI'd\b", "the user would"),
    )
)
_I_VERB = re.compile(rf"\bI\s+({_ADVERBS})([a-z']+)\b", FLAGS)
_POSSESSIVE = (
    (re.compile(r"\bmy\b", FLAGS), "the user's"),
    (re.compile(r"\bmine\b", FLAGS), "the user's"),
    (re.compile(r"\bmyself\b", FLAGS), "themselves"),
    (re.compile(r"\bme\b", FLAGS), "the user"),
    (re.compile(r"\bI\b", FLAGS), "the user"),
)


def to_third_person(clause: str) -> str:
    """Rewrite a first-person clause about the user: "I prefer my tea" -> "the user prefers ..."."""
    for pattern, replacement in _FIRST_PERSON_FIXED:
        clause = pattern.sub(replacement, clause)
    clause = _I_VERB.sub(lambda m: f"the user {m.group(1)}{third_singular(m.group(2))}", clause)
    for pattern, replacement in _POSSESSIVE:
        clause = pattern.sub(replacement, clause)
    return clause


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".!?;,: ")
    return sentence_end(text[:1].upper() + text[1:]) if text else ""


def _short_title(content: str) -> str:
    words = content.rstrip(".").split()
    title = " ".join(words[:8])
    return title if len(title) <= 60 else title[:60].rstrip()


def remember_candidate(clause: str) -> Candidate | None:
    procedure = _PROCEDURE.match(clause)
    not_to = None if procedure else _NOT_TO.match(clause)
    if procedure or not_to:
        if procedure:
            adverb = procedure.group("adverb").lower()
            body = procedure.group("body")
            content = _sentence(f"{adverb} {to_third_person(body)}")
            subtype = "constraint" if adverb == "never" else "behavioral"
        else:
            assert not_to is not None
            content = _sentence(f"do not {to_third_person(not_to.group('body'))}")
            subtype = "constraint"
        return Candidate(
            kind="procedure",
            content=content,
            title=_short_title(content),
            importance=IMPORTANCE["significant"],
            confidence=CONFIDENCE["stated"],
            tags=["instruction", "remember"],
            procedure_subtype=subtype,
            stage="regex",
        )
    if clause.lower().startswith("to "):
        return None  # "remember to buy milk": a reminder, not a memory
    clause = re.sub(r"^that\s+", "", clause, flags=FLAGS)
    words = clause.split()
    if not words or words[0].lower().strip(",.") in W.DEICTIC:
        return None
    if starts_like_question(clause) or not is_sentence(clause):
        return None
    content = _sentence(to_third_person(clause))
    if len(content.split()) < 3:
        return None
    return Candidate(
        kind="fact",
        content=content,
        title=_short_title(content),
        importance=IMPORTANCE["significant"],
        confidence=CONFIDENCE["stated"],
        tags=["remember"],
        stage="regex",
    )


def remember_clause(sentence: str) -> str | None:
    """The clause after a leading "remember"/"don't forget", or None when there is none."""
    match = _REMEMBER.search(sentence)
    if not match or not _REMEMBER_LEAD.match(sentence[: match.start()].strip()):
        return None
    clause = sentence[match.end() :].lstrip(" ,:;-\u2013\u2014")
    clause = _COURTESY_TAIL.sub("", clause)
    return clause.strip() or None


def uncovered_words(clause: str, hits: list[Hit]) -> int:
    covered = [False] * len(clause)
    for hit in hits:
        for index in range(hit.start, min(hit.end, len(clause))):
            covered[index] = True
    rest = "".join(" " if flag else char for char, flag in zip(clause, covered, strict=True))
    return len(re.findall(r"[^\W_]+", rest))
