"""Reading a user's message from its dependency parse: one statement per clause, each with
its claim (holder, predicate, value, polarity, mood) and its validity.

The rules before this read sentences by pattern, for a fixed list of attributes. Here the
parse (spaceduck.core.parse) says who the subject is, what the verb and its object are,
whether the clause is negated, conditional, reported, a question or a past state, what is
coordinated with what and which phrases are times. So "We live in Leeds with our dog and I
teach at the primary school" is three statements, "I stopped playing the piano" ends
"The user plays the piano" whatever the instrument, "my sister drinks rooibos too" is the
sister's claim with the value "rooibos", and "I'm staying in Lisbon until Sunday" holds
until Sunday without touching where the user lives.

The reader *owns* a sentence when it understood every clause of it, whatever it then
keeps (a hypothetical or a question keeps nothing); the rules read the sentences it does
not own (``Reading.rest``): instructions, introductions, events told in the past, and
everything it declines. What it cannot parse at all falls back to the rules, with the
reason kept for the extraction record (``Reading.notes``).

The package, one concern a module (each imports only those listed before it):
``words`` (the word sets and limits), ``statement`` (``Statement``, ``Reading``, declining),
``tree`` (the parse's shape), ``text`` (the message before its parse), ``objects`` (what a
clause is about), ``holders`` (whose claim, and ``Before``), ``moods`` (how it is said),
``render`` (the third-person sentence), ``claims`` (a clause's statements) and ``reading``
(a sentence's clauses). ``read_message`` stays here: it reads a message through
``_sentence`` looked up in this module.
"""

from __future__ import annotations

import logging
from datetime import datetime

from memories.extraction.understanding.holders import Before, _Earlier
from memories.extraction.understanding.objects import value_of
from memories.extraction.understanding.reading import (
    MAX_CLAIMED_CHARS,
    _sentence,
    claim_of_sentence,
)
from memories.extraction.understanding.render import render
from memories.extraction.understanding.statement import Reading, Statement
from memories.extraction.understanding.text import (
    _a_label,
    _labels,
    _left_to_the_rules,
    prepared,
)
from memories.extraction.understanding.words import (
    MAX_PARSED_CHARS,
    MAX_PARSED_TOKENS,
    RELATION,
)

__all__ = [
    "MAX_CLAIMED_CHARS",
    "MAX_PARSED_CHARS",
    "MAX_PARSED_TOKENS",
    "RELATION",
    "Before",
    "Reading",
    "Statement",
    "claim_of_sentence",
    "prepared",
    "read_message",
    "render",
    "value_of",
]

logger = logging.getLogger(__name__)


def read_message(text: str, now: datetime, before: Before | None = None) -> Reading:
    """The statements of a user's message, and what is left for the rules. ``before``'s
    people grow with the people this message names (for the next message)."""
    from spaceduck.core.parse import parse

    reading = Reading()
    people = _Earlier(before or Before())
    if _left_to_the_rules(text):  # nothing the reader keeps: the rules read it, unparsed
        reading.rest = text
        return reading
    if len(text) > MAX_PARSED_CHARS:
        reading.rest = text
        reading.notes = [f"not parsed: {len(text)} characters (over {MAX_PARSED_CHARS}): rules"]
        return reading
    try:
        doc = parse(prepared(text))
    except Exception as exc:  # a parser failure must never fail the message
        reading.rest, reading.notes = text, [f"parser failed ({type(exc).__name__}): rules"]
        return reading
    rest: list[str] = []
    labels = _labels(text)
    for sentence in doc.sents:
        if _a_label(sentence, labels):
            continue  # "bit of background before we start: I ...": says nothing itself
        try:
            statements, declined = _sentence(sentence, now, people)
        except Exception as exc:  # a reader's bug on one sentence: never a failed message
            logger.exception("the parse reader failed on a sentence; the rules read it")
            statements, declined = [], [sentence.text.strip()]
            reading.notes.append(f"parse reader failed ({type(exc).__name__}): rules")
        reading.statements += statements
        rest += declined
    reading.rest = " ".join(rest)
    return reading
