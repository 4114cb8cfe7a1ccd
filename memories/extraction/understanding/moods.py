"""How a clause is said: its mood, tense, modality, polarity, and what frames it."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from memories.extraction.claims import (
    AFFIRMED,
    ASSERTED,
    HYPOTHETICAL,
    NEGATED,
    PAST_STATE,
    REPORTED,
)
from memories.extraction.understanding.tree import (
    _aside,
    _clause_tokens,
    _has_if,
    _lemma,
    _subject,
    _time_frame,
)
from memories.extraction.understanding.words import (
    ENDING,
    ENTERTAIN,
    HEDGES,
    LASTING,
    MOMENT,
    PAST_WORDS,
    REPORTING,
    STATIVE,
    UNSURE_MODALS,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


def _mood(head: Token, holder_subject: Token | None) -> str:
    """asserted, hypothetical, question, reported or past, from the clause and above it."""
    children = list(head.children)
    deps = {c.dep_ for c in children}
    lowers = {c.lower_ for c in children}
    if any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in children):
        return HYPOTHETICAL
    if any(c.dep_ == "advcl" and _has_if(c) for c in children):
        return HYPOTHETICAL
    if lowers & HEDGES or lowers & UNSURE_MODALS:
        return HYPOTHETICAL
    if head.lemma_ in ENTERTAIN and deps & {"xcomp", "prep", "ccomp"}:
        return HYPOTHETICAL
    parent = head.head
    if head.dep_ == "ccomp" and parent is not head:
        speaker = _subject(parent)
        if parent.lemma_ in REPORTING and (speaker is None or speaker.lower_ != "i"):
            return REPORTED
        if parent.lemma_ in ENTERTAIN - {"think"}:
            return HYPOTHETICAL
    if head.lemma_ == "use" and any(c.dep_ == "xcomp" for c in children):
        return PAST_STATE
    return ASSERTED


def _told_in_the_past(head: Token) -> bool:
    """Told as something that happened: a past tense, a past with the present's form, or a
    perfect of an event ("we have signed the contract"; not "I've been", "I've got")."""
    auxiliaries = [c for c in head.children if c.dep_ in ("aux", "auxpass")]
    if head.lemma_ == "get" and any(a.lemma_ == "have" for a in auxiliaries):
        return False  # "we've got one cat": has, now (the tagger may call "got" a past)
    if any(t.tag_ == "VBD" for t in [head, *auxiliaries]) or _past_same_form(head):
        return True
    perfect = head.tag_ == "VBN" and any(a.lemma_ == "have" for a in auxiliaries)
    return perfect and head.lemma_ not in STATIVE


def _past_same_form(head: Token) -> bool:
    """ "I quit teaching piano in March": a past whose form is the present's ("quit", "put",
    "cut"), told by a time before now."""
    if head.tag_ not in ("VBP", "VB") or head.lower_ != head.lemma_.lower():
        return False
    if _lemma(head) in ENDING and any(c.lower_ == "i" for c in head.children):
        return True  # "I quit smoking": an ending is told when it has happened
    if any(c.dep_ in ("aux", "neg") or c.tag_ == "MD" for c in head.children):
        return False
    return any(t.lower_ in PAST_WORDS for t in head.subtree)


def _conditional(head: Token) -> bool:
    """An if-clause, or the clause an if-clause hangs on."""
    return _has_if(head) or any(c.dep_ == "advcl" and _has_if(c) for c in head.children)


def _fronted(head: Token, subject: Token | None) -> bool:
    """A phrase before the subject that frames the clause ("For hotfixes we ...", "To
    release the app we ...", "Since 2019 I ..."): the rules read those shapes."""
    if subject is None:
        return False
    return any(
        c.i < subject.i
        and c.dep_ in ("prep", "advcl", "npadvmod", "advmod", "dep")
        and not _time_frame(c)
        and not _aside(c, subject)
        for c in head.children
    )


def _reported_by_others(head: Token, subject: Token | None) -> bool:
    """A saying or thinking verb (or one it hangs on: "keep telling") whose subject is not
    "I", with a clause it reports."""
    if subject is not None and subject.lower_ in ("i", "we"):
        return False
    chain = [head, *(c for c in head.children if c.dep_ == "xcomp")]
    return any(v.lemma_ in REPORTING and any(c.dep_ == "ccomp" for c in v.children) for v in chain)


def _modal(head: Token) -> bool:
    """A clause with a modal ("would", "'d", "might", "will"): not a plain statement."""
    return any(t.tag_ == "MD" and t.lower_ not in ("ca", "can") for t in _clause_tokens(head))


def _introduces(head: Token) -> bool:
    """ "I'm Tomasz", "I'm 45": a name or an age after "I am" (not "home is Sheffield")."""
    if _home_is(head):
        return False
    subject = _subject(head)
    if subject is not None and any(
        c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in subject.children
    ):
        return False  # "my wife's email is kim@...", "Sam's number is ...": theirs
    return head.lemma_ == "be" and any(
        c.dep_ in ("attr", "appos", "npadvmod") and c.pos_ in ("PROPN", "NUM") and c.i > head.i
        for c in head.children
    )


def _in_progress(head: Token) -> bool:
    """ "I'm melting", "I'm leaning towards Svelte": what goes on now, not what lasts (an
    ending, "I'm living in ...", "I'm learning ..." excepted); the rules know which last."""
    if head.tag_ != "VBG" or not any(c.dep_ == "aux" and c.lemma_ == "be" for c in head.children):
        return False
    return head.lemma_ not in LASTING and _lemma(head) not in ENDING


def _passing(head: Token) -> bool:
    """ "I'm really stressed today": a state of the moment, not one to keep."""
    return any(c.lower_ in MOMENT for c in head.children)


def _home_is(head: Token) -> bool:
    """ "home is Boston", "these days home is Boston" (the parser may hang "home" on the
    verb as an adverb): where the user lives."""
    if head.lemma_ != "be":
        return False
    subject = _subject(head)
    if subject is not None and subject.lemma_.lower() == "home":
        return not any(c.dep_ in ("det", "poss") for c in subject.children)
    own = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
    return not own and any(c.lower_ == "home" and c.i < head.i for c in head.children)


def _past_state(head: Token) -> bool:
    """A state told in the past tense (not an event: "moved", "started" are the rules')."""
    return (
        head.tag_ == "VBD"
        and (head.lemma_ in STATIVE or head.lemma_ == "be")
        and head.lemma_ != "get"  # "got a job", "we've got a cat": had from then on, or has
        and not any(c.dep_ == "neg" for c in head.children)
    )


def _polarity(head: Token) -> str:
    for child in head.children:
        if child.dep_ == "neg":
            return NEGATED
        if child.lower_ in ("anymore",) or (
            child.lower_ == "longer" and any(g.lower_ == "no" for g in child.children)
        ):
            return NEGATED
    for token in head.subtree:
        if token.lower_ == "anymore" or (token.lower_ == "more" and token.nbor(-1).lower_ == "any"):
            return NEGATED
    return AFFIRMED


def _no_longer_said(head: Token) -> bool:
    """ "anymore", "any more" or "no longer" in the clause: a state that ended."""
    words = [t.lower_ for t in head.subtree]
    pairs = set(itertools.pairwise(words))
    return "anymore" in words or ("any", "more") in pairs or ("no", "longer") in pairs
