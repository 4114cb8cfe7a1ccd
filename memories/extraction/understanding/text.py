"""The message as text, before and beside its parse: what is prepared for the parser,
which pieces are labels, and what the rules read unparsed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memories.extraction.understanding.words import GREETINGS, HEDGE_WORDS, INTRODUCTION_NOUNS

if TYPE_CHECKING:
    from spacy.tokens import Span


# "quick intro. I'm ...", "quick update - I quit ...": a label of a few words says nothing
# (not "gave up violin - my wrists ...": after a dash, only a clause of "I" or "we").
_SHORT_PREFACE = re.compile(
    r"^\s*(?:[A-Za-z']+\s+){0,2}[A-Za-z']+(?:\.\s+(?=[A-Z])|\s+[-\u2013\u2014]\s+(?=(?:I|we)\b))"
)
_CLAUSE_AFTER_COLON = re.compile(r":\s+(?=(?:I|I'm|I've|we|We|my|My|our|Our)\b)")
_IS_BEFORE_ARTICLE = re.compile(r"(?<=[a-z])'s(?=\s+(?:a|an)\s)")
_HOME_IS = re.compile(r"\b([Hh]ome)'s\b(?=\s+[A-Z])")
# "I got that wrong earlier - I was born in Hanover": a dash between two statements.
_CLAUSE_AFTER_DASH = re.compile(r"(?<=\w)\s+[-\u2013\u2014]\s+(?=(?:I|I'm|I've|I was)\s)")


def prepared(text: str) -> str:
    """The message as the parse reads it best: chat spellings of function words read as
    standard English ("im", "ive", "dont": memories.extraction.spelling), and a preface
    ended at its colon when a statement follows ("bit of background: I teach ...")."""
    from memories.extraction.spelling import read_chat

    text = _CLAUSE_AFTER_COLON.sub(_ended_preface, read_chat(text))
    text = _HOME_IS.sub(r"\1 is", text)  # "home's Sheffield": not a possessive
    text = _IS_BEFORE_ARTICLE.sub(" is", text)  # "my brother's a pilot": a possessive never
    return _CLAUSE_AFTER_DASH.sub(". ", _SHORT_PREFACE.sub("", text))


_REPORTED_BEFORE = re.compile(
    r"\b(?:said|says|say|wrote|writes|texted|replied|asked|told|tells|goes|posted|tweeted|"
    r"messaged|quote|quoted|reads|read|picture this|imagine|pretend|suppose|translate|"
    r"translate (?:to|into) \w+|write|in \w+)\W*$",
    re.IGNORECASE,
)


def _ended_preface(found: re.Match[str]) -> str:
    """A colon after "she said" opens a quotation, which is not the user's statement."""
    before = found.string[: found.start()]
    return found.group(0) if _REPORTED_BEFORE.search(before) else ". "


_LABEL = re.compile(
    r"(?:^|[.!?\n]\s*)([^.!?\n:]{1,60}):\s+(?=(?:I|I'm|I've|we|We|my|My|our|Our)\b)"
)


def _labels(text: str) -> set[str]:
    """The words before a colon that opens a statement ("honest answer: I smoke")."""
    return {found.group(1).strip().lower() for found in _LABEL.finditer(text)}


def _a_label(sentence: Span, labels: set[str]) -> bool:
    """A sentence that was only a label before a colon, with nothing of the user's in it
    (not "I moved to Berlin: I love it")."""
    said = sentence.text.strip().rstrip(".").strip().lower()
    label = next((label for label in labels if said.endswith(label)), None)
    if label is None or any(t.lower_ in ("i", "me", "my", "mine") for t in sentence):
        return False
    greeting = set(_WORD.findall(said[: -len(label)]))  # "hi! bit of background: ..."
    return greeting <= GREETINGS


_PIECES = re.compile(r"(?<=[.!?])\s+|\n+")


def _left_to_the_rules(text: str) -> bool:
    """Whether every sentence is one the reader hands whole to the rules by its words alone
    (a question, a hedge, "my name is ...", a greeting: see ``_for_the_rules_whole``; or
    only an acknowledgement, which no clause reader holds): then the parse, ~2 ms a
    message, is not run for nothing."""
    pieces = [p.strip() for p in _PIECES.split(text) if p.strip()]
    return bool(pieces) and all(_whole_by_its_words(p) or _only_slots(p) for p in pieces)


def _only_slots(piece: str) -> bool:
    """ "I live in Paris.", "I work at CERN as a nurse.": every word is an identity slot's,
    which the reader hands to the slot readers anyway (``_identity``)."""
    from memories.extraction.remember import uncovered_words
    from memories.extraction.slots import slot_hits

    if not _SAID_BY_I.match(piece):
        return False  # "My brother's email is ...": whose, the parse tells
    hits = slot_hits(piece)
    return bool(hits) and uncovered_words(piece, hits) == 0


_SAID_BY_I = re.compile(r"^(?:I|I'm|I am)\s")


_INTRODUCING = re.compile(
    rf"\bmy\s+(?:{'|'.join(sorted(INTRODUCTION_NOUNS))})\b|^(?:{'|'.join(sorted(GREETINGS))})\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z']+")


# Words that only acknowledge ("ok", "Thanks, that's helpful!", "perfect, thank you"): a
# sentence of these alone has no holder and no clause to read (no "I", no name, no verb but
# "thank" and "is"), so the rules read it, unparsed.
ACKNOWLEDGING = frozenset(
    {"ok", "okay", "okie", "k", "kk", "alright", "thanks", "thank", "thx", "ty", "ta",
     "cheers", "you", "so", "much", "very", "a", "lot", "great", "cool", "nice", "perfect",
     "awesome", "excellent", "brilliant", "lovely", "good", "fine", "yes", "yeah", "yep",
     "yup", "no", "nope", "nah", "that", "that's", "thats", "this", "it", "it's", "is",
     "helpful", "useful", "wow", "oh", "ah", "right", "np"}
)  # fmt: skip


def _whole_by_its_words(piece: str) -> bool:
    words = set(_WORD.findall(piece.lower()))
    return (
        "?" in piece
        or bool(words & HEDGE_WORDS)
        or bool(_INTRODUCING.search(piece))
        or (bool(words) and words <= ACKNOWLEDGING)
        or bool(_ASKED_OF_THE_ASSISTANT.match(piece))
    )


# "Please keep it short", "Remember that my sister's birthday is in May": a request to the
# assistant and the remember stage's order, which the reader declines whole (``_clause``).
_ASKED_OF_THE_ASSISTANT = re.compile(r"^\W*(?:please|remember)\b", re.IGNORECASE)
