"""The tokens of a text that carry its meaning beyond its topic (numbers, names, versions...).

Embeddings barely move when only a number or a name changes ("Project P11 has the codename
Falcon11." vs "... P13 ... Falcon13.": cosine 0.925), so dedup compares these instead, and the
firewall uses them to find an identity slot's value in the message it came from.
"""

from __future__ import annotations

import re

from memories.extraction.sentences import is_known_word

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DOTTED = re.compile(
    r"(?<![\w./])(?:[\w-]*[a-z][\w-]*\.)+[a-z][\w-]*\b"  # example.org, settings.py
    r"|(?:/[\w.-]+){2,}"  # /etc/hosts
    r"|\b\w+_\w+\b"  # snake_case
)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NUMBER_WORDS = _words("""
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred thousand million billion dozen half twice once first second third fourth fifth
    """)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")


def salient_tokens(text: str) -> frozenset[str]:
    """The tokens of ``text`` that carry its meaning beyond its topic, casefolded: numbers
    (also inside "P11", "Falcon11", dates, versions, times), words with a digit or an inner
    capital ("P11", "macOS"), capitalised names (not a sentence's first word when that is an
    ordinary English word), number words, emails, URLs, dotted names, paths and identifiers.
    """
    out: set[str] = set()
    for pattern in (_URL, _EMAIL, _DOTTED):
        for match in pattern.finditer(text):
            out.add(match.group().casefold().rstrip(".,;:!?)"))
    out.update(match.group().replace(",", "") for match in _NUMBER.finditer(text))
    for match in _WORD_TOKEN.finditer(text):
        word = match.group()
        lower = word.casefold()
        if any(c.isdigit() for c in word) or lower in _NUMBER_WORDS:
            out.add(lower)
        elif word[0].isupper() or any(c.isupper() for c in word[1:]):
            if word == "I" or word.startswith(("I'", "I\u2019")):
                continue
            at_start = _SENTENCE_START.search(text, 0, match.start()) is not None
            if at_start and word[1:] == word[1:].lower() and is_known_word(lower):
                continue  # "The", "Our", "Project" opening a sentence
            out.add(lower)
    return frozenset(out)
