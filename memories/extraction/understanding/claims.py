"""The statements a clause makes: its claims, endings, past states, companions, and
home and work places said in passing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from memories.extraction.claims import (
    ABOUT,
    AFFIRMED,
    NEGATED,
    PAST,
    PAST_STATE,
    USER,
    Claim,
    derive,
)
from memories.extraction.types import SLOTS
from memories.extraction.understanding.holders import _holder, _noun_words
from memories.extraction.understanding.moods import _no_longer_said, _past_state, _told_in_the_past
from memories.extraction.understanding.objects import _CALENDAR, _claim, _object, value_of
from memories.extraction.understanding.render import _holder_words, render
from memories.extraction.understanding.statement import Statement, _Decline
from memories.extraction.understanding.tree import (
    _clause_tokens,
    _lemma,
    _objects,
    _owner,
    _subject,
    _time_frame,
    _to_work_in,
)
from memories.extraction.understanding.words import (
    _AGE,
    AFFILIATION,
    COMPANION_VERBS,
    DISCOURSE,
    DONE_WITH,
    ENDING,
    EXCHANGE,
    HOLDING,
    LIGHT,
    SICK_OF,
)
from memories.extraction.validity import Validity, validity_of

if TYPE_CHECKING:
    from spacy.tokens import Token


def _companions_of(head: Token, people: list[str], text: str) -> list[Statement]:
    """ "live in Leeds with our dog": the dog, whoever reads the rest of the clause."""
    try:
        holder = _holder(_subject(head), list(people))
    except _Decline:
        return []
    return [
        *_companions(head, holder, text),
        *_home_again(head, holder, text),
        *_work_place(head, holder, text),
    ]


def _work_place(head: Token, holder: str, text: str) -> Iterator[Statement]:
    place = _to_work_in(head)
    if place is not None and holder == USER:
        claim = Claim(USER, "work_in", value_of(place))
        yield Statement(f"The user works in {place.text}.", claim, "fact", Validity(), text)


def _home_again(head: Token, holder: str, text: str) -> Iterator[Statement]:
    """ "..., back home to Chicago on the 3rd": where the user lives, said in passing."""
    if holder != USER:
        return
    for child in head.children:
        if child.lower_ != "home" or child.dep_ not in ("advmod", "npadvmod"):
            continue
        if not any(t.lower_ == "back" for t in [*child.children, *head.children]):
            continue  # "I go home to Leeds every Christmas": the family's home, maybe
        to = next((c for c in child.children if c.dep_ == "prep" and c.lower_ == "to"), None)
        place = next((c for c in to.children if c.dep_ == "pobj"), None) if to else None
        if place is not None and place.pos_ == "PROPN":
            claim = Claim(USER, "location", value_of(place))
            yield Statement(f"The user's home is {place.text}.", claim, "fact", Validity(), text)


def _home(head: Token, text: str) -> Iterator[Statement]:
    """ "these days home is Boston", "home's Lisbon now": where the user lives."""
    place = next((c for c in head.children if c.dep_ in ("attr", "acomp")), None)
    if place is None or _told_in_the_past(head):
        raise _Decline
    content = f"The user's home is {place.text}."
    yield Statement(content, derive(content), "fact", Validity(), text)


def _was(statements: Iterator[Statement], content: str) -> Iterator[Statement]:
    """Past states: episodes with their time, whose claim is a past one."""
    for statement in statements:
        claim = statement.claim
        if claim is not None:
            attribute = claim.attribute.removeprefix("stay:")  # it held until then: no stay
            claim = replace(claim, attribute=attribute, polarity=PAST, mood=PAST_STATE)
        # It held until then: the time of the episode, not a validity (it stays recallable).
        when = statement.validity.valid_until or statement.validity.valid_from
        yield replace(
            statement,
            kind="episode",
            content=content or statement.content,
            claim=claim,
            validity=Validity(),
            occurred_at=when,
        )


def _read(head: Token, holder: str, now: datetime, text: str, polarity: str) -> Iterator[Statement]:
    lemma = _lemma(head)
    age = _turned(head)
    if age is not None:  # "she turned 8 on Saturday": her age now, not an event to date
        owner = "The user" if holder == USER else _holder_words(holder)
        claim = Claim(holder, "age", age.text)
        yield Statement(f"{owner} is {age.text}.", claim, "fact", Validity(), text)
        return
    birthplace = _birthplace(head)
    if birthplace is not None:  # told in the past, and true for good
        claim = Claim(holder, "birthplace", value_of(birthplace), polarity)
        yield Statement(render(head, holder), claim, "fact", Validity(), text)
        return
    if (
        _told_in_the_past(head)
        and lemma not in ENDING
        and polarity != PAST
        and not _past_state(head)
    ):
        raise _Decline  # an event told in the past: the rules date episodes
    validity = validity_of(head, now)
    fed_up = _fed_up(head)
    if fed_up is not None:
        yield from _fed_up_with(head, holder, text, validity, *fed_up)
        return
    if lemma in ENDING:
        kind = "episode" if _told_in_the_past(head) else "fact"
        for statement in _ending(head, holder, now, text, validity):
            ends = statement.claim is not None and statement.claim.polarity == NEGATED
            yield replace(statement, kind=kind) if ends else statement
        return
    obj, _ = _object(head)
    if obj is not None and (_AGE.search(value_of(obj)) or _to_do(obj)):
        raise _Decline  # "I have 29 years": an age; "six write-ups to do": an obligation
    if obj is not None and any(t.pos_ == "VERB" and t.dep_ == "conj" for t in obj.subtree):
        raise _Decline  # a verb inside the object: the parse went wrong ("jazz and hate")
    chain = _conjuncts(obj) + _stray_conjuncts(head) if obj is not None else []
    if obj is None and head.lemma_ in LIGHT:
        raise _Decline  # "I go to work with the metro": the verb says nothing alone
    if obj is None and head.lemma_ in DISCOURSE and not _objects(head):
        return  # "I know, I know": talk about the conversation, nothing to keep
    variants: list[Token | None] = list(chain) or [None]
    for variant in variants:
        content = render(head, holder, obj, variant, chain)
        claim = _claim(head, holder, lemma, content, polarity, variant)
        if claim is not None and validity.bounded:
            if claim.attribute in ("location", "employer", "be_in"):
                # "living in Madrid until June": a stay, not where the user lives.
                where = "location" if claim.attribute == "be_in" else claim.attribute
                claim = replace(claim, attribute=f"stay:{where}")
        elif _identity(head, holder, claim):
            raise _Decline  # the user's identity: the slot readers fill it
        # "can't watch The Office anymore": what no longer holds ends what named it.
        ends = _thing_of(claim) if polarity == NEGATED and _no_longer_said(head) else ""
        yield Statement(content, claim, "fact", validity, text, ends=ends)


def _turned(head: Token) -> Token | None:
    """ "turned 8", "just turned 40": the age reached."""
    if head.lemma_ != "turn":
        return None
    return next(
        (c for c in head.children if c.dep_ in ("dobj", "attr", "oprd", "npadvmod") and c.like_num),
        None,
    )


def _birthplace(head: Token) -> Token | None:
    """ "I was born in Hanover": the place (one for good: a correction replaces it)."""
    if head.lemma_ != "bear" or head.tag_ != "VBN":
        return None
    if not any(c.dep_ == "auxpass" for c in head.children):
        return None
    where = next((c for c in head.children if c.dep_ == "prep" and c.lower_ == "in"), None)
    place = next((c for c in where.children if c.dep_ == "pobj"), None) if where else None
    if place is None or place.like_num or place.lower_ in _CALENDAR:
        return None  # "born in 1990", "born in May": when, the rules' birthday
    return place


def _identity(head: Token, holder: str, claim: Claim | None) -> bool:
    """The user's identity said plainly (an identity slot, "I'm a nurse", "I'm in Denver",
    "I'm hungry"): the regex stage and the rules fill the slots and know which states
    last; the parse reads the rest (ended, past, bounded, other people's)."""
    if holder != USER or claim is None:
        return False
    subject = _subject(head)
    if subject is not None and subject.lower_ == "we":
        return False  # a household's: the readers of "we" take it for a team
    if claim.attribute in SLOTS and claim.polarity == AFFIRMED:
        return True
    if head.lemma_ in AFFILIATION and (not claim.attribute.startswith(ABOUT) or "_" in claim.value):
        # "I work like engineer in Siemens", "I stay in Seoul": where or for whom, in shapes
        # the slot readers know; "I teach piano" (what is taught) and what they do not
        # read ("I work in insurance": a sector) are read here.
        return claim.attribute not in ("location", "employer", "role") and _slots_read(head)
    # "I'm a nurse", "I'm the head of data at Wefox", "I'm no longer at Zalando": who the user
    # is, which the slot readers and the rules know; "allergic to nuts", "into jazz" (a
    # quality of something) are read here.
    if head.lemma_ != "be" or claim.polarity == PAST:
        return False
    return not any(
        c.dep_ == "acomp" and any(g.dep_ == "prep" for g in c.children) for c in head.children
    )


def _slots_read(head: Token) -> bool:
    """Whether the slot readers find an identity slot in the clause."""
    from memories.extraction.slots import slot_hits

    return bool(slot_hits(" ".join(t.text for t in _clause_tokens(head))))


def _fed_up(head: Token) -> tuple[str, Token] | None:
    """ "I'm done with The Killers", "I'm so sick of lasagne": (how, the thing), or None."""
    if head.lower_ in DONE_WITH | SICK_OF:  # "I'm done with ...": a participle, for the parser
        return _with_what(head, head)
    if head.lemma_ != "be":
        return None
    for child in head.children:
        if child.dep_ == "acomp" and child.lower_ in DONE_WITH | SICK_OF:
            prep = next((c for c in child.children if c.dep_ == "prep"), None)
            thing = next((c for c in prep.children if c.dep_ == "pobj"), None) if prep else None
            if thing is not None:
                return ("sick" if child.lower_ in SICK_OF else "done"), thing
    return None


def _with_what(word: Token, head: Token) -> tuple[str, Token] | None:
    prep = next((c for c in word.children if c.dep_ == "prep"), None)
    thing = next((c for c in prep.children if c.dep_ == "pobj"), None) if prep else None
    if thing is None:
        return None
    return ("sick" if word.lower_ in SICK_OF else "done"), thing


def _fed_up_with(
    head: Token, holder: str, text: str, validity: Validity, how: str, thing: Token
) -> Iterator[Statement]:
    value = value_of(thing)
    content = render(head, holder)
    if how == "sick":  # a dislike: the opinion turned
        claim = Claim(holder, f"opinion:{value}", "negative")
    else:  # whatever the holder did with it, ended
        claim = Claim(holder, f"{ABOUT}{value}", "*", NEGATED)
    yield Statement(content, claim, "fact", validity, text, ends=value)


def _to_do(obj: Token) -> bool:
    """ "six write-ups to do", "a report to finish": what is to be done, not had."""
    return any(c.dep_ in ("relcl", "acl") and c.tag_ == "VB" for c in obj.children)


def _conjuncts(token: Token) -> list[Token]:
    """ "peanuts and shellfish": each thing coordinated with the object, the object first."""
    chain = [token]
    for child in token.children:
        if child.dep_ == "conj" and child.pos_ in ("NOUN", "PROPN", "ADJ"):
            chain += _conjuncts(child)
    return chain


def _named_by(obj: Token) -> str:
    """The words that name what ended: the object's own ("the Volvo" -> "volvo"), or the
    place or thing after it when the object is only what the holder had of it ("my
    membership at the climbing gym" -> "climbing gym", "my Netflix subscription" -> "netflix")."""
    # The parser often hangs "at the climbing gym" on the verb: for what is only held of a
    # thing (a membership, a subscription), the verb's place names it too.
    held_of = obj.lemma_.lower() in HOLDING
    preps = [*obj.children, *(obj.head.children if held_of else [])]
    for child in preps:
        if child.dep_ == "prep" and (child.head is obj or child.lower_ in ("at", "with", "to")):
            pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
            if pobj is not None:
                return value_of(pobj)
    proper = [c for c in obj.children if c.dep_ == "compound" and c.pos_ == "PROPN"]
    return " ".join(c.lower_ for c in proper) if proper else value_of(obj)


def _stray_conjuncts(head: Token) -> list[Token]:
    """A bare word the parser coordinated with the verb instead of the object ("allergic to
    peanuts and shellfish", with "shellfish" read as a verb): one more object."""
    return [c for c in head.children if c.dep_ == "conj" and not list(c.children)]


def _ending(
    head: Token, holder: str, now: datetime, text: str, validity: Validity
) -> Iterator[Statement]:
    """ "stopped playing the piano": the piano playing, negated; "gave up the trumpet",
    "sold my scooter": whatever the holder did with it, ended; "swapped X for Y": and Y."""
    content = render(head, holder)
    known = derive(content)
    if known is not None and known.polarity == NEGATED:  # "stopped being vegetarian"
        claim = replace(known, subject=holder)
        yield Statement(content, claim, "fact", validity, text, ends=_thing_of(claim))
        return
    inner = next(
        (c for c in head.children if c.dep_ in ("xcomp", "ccomp", "advcl") and c.tag_ == "VBG"),
        None,
    ) or _from_doing(head)
    if inner is not None:
        for statement in _read(inner, holder, now, text, NEGATED):
            ends = _thing_of(statement.claim)  # "stopped playing the cello": the cello
            yield replace(statement, content=content, validity=validity, ends=ends)
        return
    obj = _object(head)[0] or _ended_after_preposition(head)
    if obj is None:
        raise _Decline
    value = value_of(obj)
    claim = Claim(holder, f"about:{value}", "*", NEGATED)
    yield Statement(content, claim, "fact", validity, text, ends=_named_by(obj))
    if head.lemma_ in EXCHANGE:
        for_ = next(
            (c for c in head.children if c.dep_ == "prep" and c.lower_ in ("for", "with")),
            None,
        )
        new = next((c for c in for_.children if c.dep_ == "pobj"), None) if for_ else None
        if new is not None:
            thing = value_of(new)
            owner = "The user" if holder == USER else _holder_words(holder)
            said = " ".join(t.text for t in new.subtree if t.dep_ not in ("det", "poss", "punct"))
            sentence = f"{owner} has {_article(said.lower())}{said}."  # "an iPhone 15", as said
            yield Statement(
                sentence, Claim(holder, f"about:{thing}", "have"), "fact", Validity(), text
            )


def _ended_after_preposition(head: Token) -> Token | None:
    """ "gave up on Portuguese", "retired from dentistry": what ended, after the particle."""
    return next(
        (
            g
            for c in head.children
            if c.dep_ == "prep" and c.lower_ in ("on", "from", "with") and not _time_frame(c)
            for g in c.children
            if g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN")
        ),
        None,
    )


def _from_doing(head: Token) -> Token | None:
    """ "stepped down from coaching the team": what was done, after a preposition."""
    return next(
        (
            g
            for c in head.children
            if c.dep_ == "prep"
            for g in c.children
            if g.dep_ == "pcomp" and g.tag_ == "VBG"
        ),
        None,
    )


def _thing_of(claim: Claim | None) -> str:
    """What an ended opinion or doing is about ("opinion:true crime" -> "true crime"), for
    the decision step to find the memories that name it; "" for other claims."""
    if claim is None or not claim.attribute.startswith(("opinion:", ABOUT)):
        return ""
    return claim.attribute.split(":", 1)[1]


def _companions(head: Token, holder: str, text: str) -> Iterator[Statement]:
    """ "live in Leeds with our dog Max": the dog is a fact of its own."""
    if head.lemma_ not in COMPANION_VERBS:
        return  # "need help with my essay": not something the user has
    for token in head.subtree:
        if token.dep_ != "prep" or token.lower_ != "with":
            continue
        pobj = next((c for c in token.children if c.dep_ == "pobj"), None)
        if pobj is None or _owner(pobj) != USER or pobj.pos_ != "NOUN":
            continue
        thing = _noun_words(pobj)
        name = next((c.text for c in pobj.children if c.dep_ == "appos" and c.pos_ == "PROPN"), "")
        owner = "The user" if holder == USER else _holder_words(holder)
        named = f" called {name}" if name else ""
        sentence = f"{owner} has {_article(thing)}{thing}{named}."
        yield Statement(sentence, Claim(holder, f"about:{thing}", "have"), "fact", Validity(), text)


def _article(thing: str) -> str:
    return "" if thing.endswith("s") else ("an " if thing[:1] in "aeiou" else "a ")
