"""When a clause holds: "until Friday", "for the week", "this summer", "since 2019".

Read from the clause's time phrases in the parse (a preposition and its object, or a
noun phrase used as an adverb) and dated with ``dateparser`` against the message's time.
A bounded statement ("I'm in Madrid for the week") holds until ``valid_until`` and then
leaves recall and context; it never replaces the lasting fact it sits beside.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

UNTIL = frozenset({"until", "till", "til", "'til", "through", "thru"})
DURING = frozenset({"for", "over", "during", "throughout"})
# How long a period lasts from now when it is said without a date ("for the week").
PERIODS = {
    "day": 1, "night": 1, "weekend": 3, "week": 7, "fortnight": 14, "month": 31,
    "summer": 92, "winter": 92, "spring": 92, "autumn": 92, "fall": 92, "term": 92,
    "semester": 122, "holiday": 21, "holidays": 21, "vacation": 21, "year": 365,
}  # fmt: skip
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "few": 3, "couple": 2, "several": 4}  # fmt: skip


@dataclass(frozen=True)
class Validity:
    valid_from: datetime | None = None
    valid_until: datetime | None = None

    @property
    def bounded(self) -> bool:
        return self.valid_until is not None


def validity_of(head: Token, now: datetime) -> Validity:
    """The clause's validity from its own time phrases (not those of clauses below it)."""
    start: datetime | None = None
    end: datetime | None = None
    described = [c for c in head.children if c.dep_ in ("acomp", "attr", "dobj")]
    # "vegetarian since 2019": the time phrase may hang on what the clause says of its subject.
    phrases = [*head.children, *(g for c in described for g in c.children)]
    for child in phrases:
        lower = child.lower_
        if child.dep_ == "prep" and lower in UNTIL:
            end = end or _date(_object_text(child), now, future=True)
        elif child.dep_ == "prep" and lower in DURING:
            end = end or _period(_object_tokens(child), now)
        elif child.dep_ == "prep" and lower == "since":
            start = start or _date(_object_text(child), now, future=False)
        elif child.dep_ in ("npadvmod", "advmod") and any(
            g.lower_ in ("this", "next") for g in child.children
        ):
            end = end or _period([child, *child.children], now)
    return Validity(start, end)


def _object_tokens(prep: Token) -> list[Token]:
    pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
    return list(pobj.subtree) if pobj is not None else []


def _object_text(prep: Token) -> str:
    return " ".join(t.text for t in _object_tokens(prep))


def _period(tokens: list[Token], now: datetime) -> datetime | None:
    """ "the week" -> now + 7 days; "two weeks" -> + 14; "the summer" -> + 92."""
    lowers = [t.lower_ for t in tokens]
    for i, word in enumerate(lowers):
        singular = word[:-1] if word.endswith("s") and word[:-1] in PERIODS else word
        if singular in PERIODS:
            count = 1
            for before in lowers[:i]:
                if before.isdigit():
                    count = int(before)
                count = NUMBERS.get(before, count)
            return now + timedelta(days=PERIODS[singular] * count)
    return None


def _date(text: str, now: datetime, *, future: bool) -> datetime | None:
    """A date said in words, after (or before) ``now``; the end of that day for "until"."""
    import dateparser

    if not text.strip():
        return None
    settings = {
        "RELATIVE_BASE": now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future" if future else "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    found = dateparser.parse(text, languages=["en"], settings=settings)  # type: ignore[arg-type]
    if found is None:
        return None
    found = found.replace(tzinfo=now.tzinfo)
    if future and text.strip().isdigit():  # "until 2019": to its last day
        return found.replace(month=12, day=31, hour=23, minute=59, second=59, microsecond=0)
    if future:
        return found.replace(hour=23, minute=59, second=59, microsecond=0)
    if text.strip().isdigit():  # "since 2019": from its first day
        return found.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return found
