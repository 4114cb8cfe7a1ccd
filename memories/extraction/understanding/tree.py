"""The shape of a parse: clause heads, subjects, objects, asides and time frames, the
tokens a clause is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from memories.extraction.claims import USER
from memories.extraction.understanding.words import (
    ENDING,
    ENTERTAIN,
    FILLERS,
    INTENSIFIERS,
    REPORTING,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


def _to_work_in(head: Token) -> Token | None:
    """ "drive the Land Rover to work in Leipzig": the place of work said in passing (the
    verb has its own object), or None."""
    if not any(c.dep_ == "dobj" for c in head.children):
        return None
    for child in head.children:
        if child.dep_ != "xcomp" or child.lemma_ != "work":
            continue
        where = next((c for c in child.children if c.dep_ == "prep" and c.lower_ == "in"), None)
        place = next((c for c in where.children if c.dep_ == "pobj"), None) if where else None
        if place is not None and place.text[:1].isupper():  # "Reading": a name, as written
            return place
    return None


def _heads(root: Token) -> Iterator[Token]:
    """The clause heads: the root, every verb coordinated with it, and a clause spliced in
    with a comma that has its own subject."""
    yield root
    for child in root.children:
        if (child.dep_ == "conj" and _is_clause(child)) or _spliced(child, root):
            yield from _heads(child)


def _spliced(child: Token, root: Token) -> bool:
    """A clause with its own subject put before the root with a comma ("I gave up the
    trumpet, my lungs weren't up to it"), not what someone says or thinks."""
    own_subject = any(c.dep_ in ("nsubj", "nsubjpass") for c in child.children)
    if child.i < root.i and not own_subject and (child.tag_ in ("VBD", "VBN") or _can_not(child)):
        # "gave up the drums - my wrists couldn't take it": a chat clause of its own
        return child.dep_ in ("ccomp", "parataxis", "advcl", "dep", "conj")
    if child.dep_ == "advcl" and child.i > root.i:  # "..., these days I'm vegetarian"
        framed = any(c.dep_ == "mark" or c.tag_ == "WRB" for c in child.children)
        return own_subject and not framed  # not "when I was a kid", "because I ..."
    return (
        child.dep_ in ("ccomp", "parataxis")
        and child.i < root.i
        and own_subject
        and root.lemma_ not in REPORTING | ENTERTAIN
    )


def _subject(head: Token) -> Token | None:
    for child in head.children:
        if child.dep_ in ("nsubj", "nsubjpass", "expl"):
            return child
    if head.dep_ in ("conj", "xcomp") and head.head is not head:
        return _subject(head.head)
    return None


def _can_not(head: Token) -> bool:
    """ "can't watch ...", "cannot eat ...": what the user can no longer do, in chat."""
    children = list(head.children)
    return (
        head.tag_ == "VB"
        and any(c.tag_ == "MD" and c.lower_ in ("ca", "can", "cannot") for c in children)
        and any(c.dep_ == "neg" for c in children)
    )


def _owner(noun: Token) -> str:
    for child in noun.children:
        if child.dep_ == "poss" and child.lower_ in ("my", "our"):
            return USER
    return ""


def _aside(token: Token, subject: Token | None) -> bool:
    """A word before the subject the parser could not attach ("fyi", "btw", "tbh"), or a
    phrase after the verb ("..., about 25 mins each way"): said aside."""
    if token.i > token.head.i:  # after a comma: said aside; else the parse lost its place
        first = min((t.i for t in token.subtree if not t.is_punct), default=token.i)
        return first > 0 and token.doc[first - 1].text in (",", "-", "(")
    return subject is not None and token.i < subject.i and not list(token.children)


def _time_frame(token: Token) -> bool:
    """ "now", "these days", "nowadays", "this year": when, not what the clause says."""
    from memories.extraction.validity import DURING, PERIODS, UNTIL

    if token.lower_ in ("now", "also", "actually", "still", "honestly", "nowadays", "lately"):
        return True
    if token.dep_ == "prep" and token.lower_ in DURING | UNTIL:  # "over the holidays"
        return any(g.dep_ == "pobj" and g.lemma_.lower() in PERIODS for g in token.children)
    return token.dep_ == "npadvmod" and token.lemma_ in ("day", "week", "month", "year", "time")


def _objects(head: Token) -> list[Token]:
    """What the verb is done to: its objects, the objects of its prepositions, and those of
    the verb it governs ("stopped playing it"); not words in an aside ("already on it")."""
    found: list[Token] = []
    for child in head.children:
        if child.dep_ in ("dobj", "attr", "oprd"):
            found.append(child)
        elif child.dep_ in ("prep", "prt", "acomp") and child.i > head.i:  # not "on it, got..."
            found += [g for g in child.children if g.dep_ in ("pobj", "dobj")]
            found += [
                p
                for g in child.children
                if g.dep_ == "prep"
                for p in g.children
                if p.dep_ == "pobj"
            ]
        elif child.dep_ == "xcomp":
            found += _objects(child)
    return found


def _has_if(clause: Token) -> bool:
    return any(c.dep_ == "mark" and c.lower_ in ("if", "unless") for c in clause.children)


def _lemma(head: Token) -> str:
    """The verb with its particle: "give_up", "pack_in"."""
    particles = [c.lower_ for c in head.children if c.dep_ == "prt"]
    lemma = "_".join([head.lemma_.lower(), *particles])
    if not particles:  # "gone off it": the parser took the particle for a preposition
        phrasal = (f"{lemma}_{c.lower_}" for c in head.children if c.dep_ == "prep")
        lemma = next((p for p in phrasal if p in ENDING), lemma)
    return lemma


def _is_clause(token: Token) -> bool:
    """A coordinated verb that is a clause of its own (it has words of its own); or a word
    the tagger took for a noun that is a verb by its place ("live in Bristol and work at
    the library": after "and", a preposition of its own, no article)."""
    children = list(token.children)
    if token.pos_ in ("VERB", "AUX"):
        return bool(children)
    return (
        token.pos_ == "NOUN"
        and token.head.pos_ == "VERB"
        and any(c.dep_ in ("prep", "dobj") for c in children)
        and not any(c.dep_ in ("det", "poss", "amod", "compound") for c in children)
    )


def _own(token: Token) -> list[Token]:
    """A conjunct's words without the conjuncts, commas and "and" after it."""
    inner = {
        t.i
        for c in token.children
        if c.dep_ in ("conj", "cc", "punct", "preconj")
        for t in c.subtree
    }
    return [t for t in token.subtree if t.i not in inner]


def _phrase(token: Token, *, keep_appos: bool = True) -> str:
    words = [
        t
        for t in token.subtree
        if keep_appos or not any(a.dep_ == "appos" for a in [t, *t.ancestors] if a is not token)
    ]
    return " ".join(t.text for t in words if t.dep_ != "punct")


def _clause_tokens(head: Token) -> list[Token]:
    """The head's subtree without other clauses, their conjunctions, fillers and edges."""
    skip: set[int] = set()
    for child in head.children:
        if child.dep_ == "conj" and _is_clause(child):
            skip.update(t.i for t in child.subtree)
        elif _spliced(child, head):
            skip.update(t.i for t in child.subtree)  # a clause spliced in with a comma
        elif child.dep_ == "cc":
            skip.add(child.i)
        elif child.dep_ == "advcl" and child.tag_ == "VBG" and _lemma(head) in ENDING:
            continue  # "gone off running": what ended
        elif (
            child.dep_ in ("advcl", "parataxis", "mark", "intj")
            or (child.dep_ == "dep" and child.i > head.i and _aside(child, None))
            or (child.lower_ in FILLERS and child.dep_ == "advmod")
        ):
            skip.update(t.i for t in child.subtree)
        elif child.lower_ == "well" and any(g.lower_ == "as" for g in child.children):
            skip.update(t.i for t in child.subtree)  # "as well"
        elif child.dep_ == "xcomp" and _to_work_in(head) is not None and child.lemma_ == "work":
            skip.update(t.i for t in child.subtree)  # "to work in Leipzig": its own
        elif child.lower_ == "home" and any(g.dep_ == "prep" for g in child.children):
            skip.update(t.i for t in child.subtree)  # "back home to Chicago": its own
            skip.update(t.i for t in head.children if t.lower_ == "back")
    for token in head.subtree:
        if token.dep_ == "prep" and token.lower_ == "with" and _owner(_pobj(token)) == USER:
            skip.update(t.i for t in token.subtree)  # a companion: its own statement
        if token.dep_ == "appos" and "@" in token.text:
            skip.update(t.i for t in token.subtree)
        if token.dep_ == "advmod" and token.lower_ in INTENSIFIERS and not list(token.children):
            skip.add(token.i)  # "gone right off", "totally grown on": how much, not what
    tokens = [t for t in head.subtree if t.i not in skip]
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ == "cc"):
        tokens.pop()
    while tokens and (tokens[0].is_punct or tokens[0].dep_ == "cc"):
        tokens.pop(0)
    return tokens


def _pobj(prep: Token) -> Token:
    return next((c for c in prep.children if c.dep_ == "pobj"), prep)
