"""What a clause is about: its object, the value it names and its claim."""

from __future__ import annotations

import calendar
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from memories.extraction.claims import USER, Claim, derive, folded
from memories.extraction.understanding.statement import _Decline
from memories.extraction.understanding.tree import _subject, _time_frame
from memories.extraction.understanding.words import (
    _AGE,
    _SPACE,
    AFFILIATION,
    FUNCTIONAL_PREPS,
    LOCATIVE,
    NOT_WHAT,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


def _claim(
    head: Token, holder: str, lemma: str, content: str, polarity: str, variant: Token | None
) -> Claim | None:
    """The attribute readers first (location, employer, opinion, count...: one value at a
    time), then the clause's own verb and object."""
    known = derive(content)
    if known is not None:
        return (
            known if known.subject == holder or holder == USER else replace(known, subject=holder)
        )
    obj, prep = _object(head)
    if obj is None:
        if head.lemma_ == "be":
            raise _Decline  # "I'm 34", "I'm Sam": the regex stage's
        if head.lemma_ in AFFILIATION or _fronted_object(head) or _on_a_day(head):
            # "I live nearby": where is not said; "Beef I don't eat": the object stands
            # before the subject; "I start on the 1st": an event on a day, the rules' to date
            raise _Decline
        return Claim(holder, f"about:{head.lemma_.lower()}", lemma, polarity)
    thing = variant if variant is not None else obj
    if thing.pos_ == "PRON" and thing.i not in head.doc.user_data.get("antecedents", {}):
        raise _Decline  # "my grandma calls me that": a pronoun names nothing to hold
    value = value_of(thing)
    if not value or _AGE.search(value):
        raise _Decline  # "I have 45 years": an age, the regex stage's
    if (prep in FUNCTIONAL_PREPS and head.lemma_ in AFFILIATION) or (
        head.lemma_ == "be" and prep and "_" not in prep
    ):
        return folded(Claim(holder, f"{head.lemma_.lower()}_{prep}", value, polarity))
    verb = f"{lemma}_{prep}" if prep else lemma
    return folded(Claim(holder, f"{verb}:{value}", value, polarity))


def _fronted_object(head: Token) -> bool:
    subject = _subject(head)
    return subject is not None and any(
        c.i < subject.i and c.pos_ == "NOUN" and c.dep_ in ("npadvmod", "dep") and not _a_period(c)
        for c in head.children
    )


_ORDINAL_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)")
_CALENDAR = frozenset(
    name.lower()
    for name in [*calendar.day_name, *calendar.month_name, *calendar.month_abbr]
    if name
)


def _on_a_day(head: Token) -> bool:
    """ "start on the 1st", "leave on Friday": when, not what the verb is about."""
    return any(
        g.dep_ == "pobj" and (_ORDINAL_DAY.fullmatch(g.lower_) or g.lower_ in _CALENDAR)
        for c in head.children
        if c.dep_ == "prep"
        for g in c.children
    )


def _object(head: Token) -> tuple[Token | None, str]:
    """The clause's object and the preposition that takes it ("" for a direct object)."""
    children = list(head.children)
    for child in children:
        if child.dep_ in ("dobj", "attr", "oprd"):
            return child, ""
    unknown = next((c for c in children if _an_unknown_thing(c, head)), None)
    if unknown is not None:
        return unknown, ""
    for child in children:
        if child.dep_ == "acomp":
            inner = next((c for c in child.children if c.dep_ == "prep"), None)
            if inner is not None:
                pobj = next((c for c in inner.children if c.dep_ == "pobj"), None)
                if pobj is not None:
                    return pobj, f"{child.lower_}_{inner.lower_}"
            return child, ""
    for child in children:
        placed = head.lemma_ in AFFILIATION or head.lemma_ == "be"  # "lives in", "is in"
        if child.dep_ == "prep" and child.lower_ in LOCATIVE and not placed:
            continue  # "swims at the lido": where, not what (the claim is about swimming)
        if child.dep_ == "prep" and child.lower_ not in NOT_WHAT and not _time_frame(child):
            pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
            if pobj is not None and not (child.lower_ == "for" and _a_period(pobj)):
                return pobj, child.lower_
    for child in children:
        if child.dep_ == "xcomp":
            return _object(child)
    return None, ""


def _an_unknown_thing(child: Token, head: Token) -> bool:
    """ "drinks oolong": a word the tagger took for an adverb right after the verb, that
    the lexicon does not know at all (no adverb it knows: "often", "daily", "together")."""
    from memories.extraction.sentences import is_known_word

    return (
        child.dep_ == "advmod"
        and child.i == head.i + 1
        and child.is_alpha
        and child.is_lower
        and not is_known_word(child.lower_)
    )


def _a_period(token: Token) -> bool:
    """ "for the week", "for two years", "for a while": how long, not what for."""
    from memories.extraction.validity import PERIODS

    lemma = token.lemma_.lower()
    return lemma in PERIODS or lemma in ("while", "moment", "now", "ages", "life")


def value_of(token: Token) -> str:
    """The object's words without determiners, possessives, fillers, clauses or trailing
    phrases: "oolong as well" -> "oolong", "the primary school" -> "primary school"; a
    pronoun, what it names (``_resolved``)."""
    named = token.doc.user_data.get("antecedents", {})
    if token.i in named:
        return str(named[token.i])
    if token.ent_type_ and token.ent_iob_ != "O":
        entity = next(e for e in token.doc.ents if e.start <= token.i < e.end)
        return entity.text.lower().strip()
    left = [
        c
        for c in token.children
        if c.i < token.i and c.dep_ in ("amod", "compound", "nummod", "nmod")
    ]
    words = [w for c in left for w in c.subtree] + [token]
    words.sort(key=lambda t: t.i)
    value = " ".join(w.lower_ for w in words if w.dep_ not in ("det", "poss", "punct"))
    return _SPACE.sub(" ", value).strip()
