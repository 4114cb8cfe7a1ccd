"""Whose claim a clause is: the subject's holder, the people named before (the
conversation's ``Before``) and what a pronoun names."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memories.extraction.claims import RELATIVES, USER
from memories.extraction.understanding.objects import value_of
from memories.extraction.understanding.statement import _Decline
from memories.extraction.understanding.text import prepared
from memories.extraction.understanding.tree import (
    _can_not,
    _lemma,
    _objects,
    _owner,
    _phrase,
    _spliced,
)
from memories.extraction.understanding.words import (
    ENDING,
    FEMALE,
    GENERIC,
    MALE,
    REFERRING,
    RELATION,
    STANCE,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


@dataclass
class Before:
    """The conversation before the message, read only when the message needs it (the write
    path's hot loop pays nothing for a message that stands alone): the turns before it,
    latest last, as (role, text); the live memories its thread produced, oldest first, as
    (id, kind, content); the people named so far (whom "she" and "he" can be)."""

    holders: list[str] = field(default_factory=list)  # other people named, latest last
    turns: Callable[[], list[tuple[str, str]]] = lambda: []
    memories: Callable[[], list[tuple[int, str, str]]] = lambda: []
    _earlier_read: bool = False

    def people(self) -> list[str]:
        """The people named in this message so far, else in the user's turns before it."""
        if not self.holders and not self._earlier_read:
            self._earlier_read = True
            for role, text in self.turns():
                if role == "user":
                    _people_in(text, self.holders)
            if not self.holders:  # an earlier session: what its memories say about whom
                self.holders += [
                    f"user's {found.group(1).lower()}"
                    for _, _, content in self.memories()
                    if (found := _ABOUT_RELATIVE.match(content))
                ]
        return self.holders


_ABOUT_RELATIVE = re.compile(rf"^The user's ((?:{RELATIVES}|wife|kid|child|partner))\b", re.I)


def _people_in(text: str, people: list[str]) -> None:
    """Add the people a message's subjects name ("My sister drinks ...", "Rita said ...")."""
    from spaceduck.core.parse import parse

    for sentence in parse(text).sents:
        for token in sentence:
            if token.dep_ in ("nsubj", "nsubjpass") and token.lower_ not in ("i", "we", "you"):
                try:
                    _holder(token, people)
                except _Decline:
                    continue


class _Earlier(list[str]):
    """The people named in this message (a list), and the conversation to look back into."""

    def __init__(self, before: Before) -> None:
        super().__init__(before.holders)
        self.before = before
        self.first_here = len(before.holders)

    def named_here(self) -> bool:
        """Whether this message has named someone else as a subject so far."""
        return len(self) > self.first_here


def _who(pronoun: str, people: list[str]) -> str:
    """The latest person "he" or "she" can be ("My daughter loves horses. My son ... and he
    plays football": the son); "" when nobody agrees."""
    barred = FEMALE if pronoun == "he" else MALE if pronoun == "she" else frozenset()
    return next((p for p in reversed(people) if p.split()[-1] not in barred), "")


def _holder(subject: Token | None, people: list[str], head: Token | None = None) -> str:
    """Whose claim: "user", "user's sister", "rita"; _Decline when nobody (an instruction,
    "it", "you"). A chat clause without a subject told in the past ("sold the Volvo on
    saturday!!") is the user's."""
    if subject is None and head is not None and _said_without_i(head):
        return USER
    if subject is None:
        raise _Decline
    lower = subject.lower_
    if any(c.dep_ == "conj" and c.lower_ in ("i", "me") for c in subject.children):
        raise _Decline  # "Sam and I are engaged": a couple, the rules' partner readers
    if lower in ("i", "we") or _the_user(subject):
        return USER
    if lower in ("he", "she", "they") and people:
        if who := _who(lower, people):
            return who
        raise _Decline  # "she" after only men were named: nobody the reader knows
    if lower in ("he", "she") and isinstance(people, _Earlier) and people.before.people():
        if who := _who(lower, people.before.people()):
            return who
        raise _Decline
    if _a_person(subject):
        name = _phrase(subject, keep_appos=False)
        people.append(name.lower())
        return name.lower()
    if subject.lemma_ == "home" and not any(c.dep_ == "det" for c in subject.children):
        return USER  # "home is Boston these days": where the user lives
    relative = _relative_owner(subject)
    if relative:  # "my brother's email is ...": the brother's
        people.append(relative)
        return relative
    named = next((c for c in subject.children if c.dep_ == "poss" and _a_name(c)), None)
    if named is not None:  # "Sam's number is ...": Sam's
        people.append(named.text.lower())
        return named.text.lower()
    if subject.pos_ == "NOUN" and _owner(subject) == USER:
        noun = _noun_words(subject)
        if not RELATION.fullmatch(noun.split()[-1]):
            raise _Decline  # "my home", "my name": a thing of the user's, the rules' to read
        holder = f"user's {noun}"
        people.append(holder)
        return holder
    raise _Decline


def _the_user(token: Token) -> bool:
    """ "The user" of a canonical sentence (the memories' own wording)."""
    return token.lower_ == "user" and any(c.lower_ == "the" for c in token.children)


def _relative_owner(noun: Token) -> str:
    """ "user's brother" for "my brother's email"; "" when the noun is nobody's relative's."""
    if any(c.dep_ == "poss" and _the_user(c) for c in noun.children):  # "The user's sister"
        return f"user's {_noun_words(noun)}" if RELATION.fullmatch(noun.lemma_.lower()) else ""
    owner = next((c for c in noun.children if c.dep_ == "poss" and c.pos_ == "NOUN"), None)
    if owner is None or _owner(owner) != USER or not RELATION.fullmatch(owner.lemma_.lower()):
        return ""
    return f"user's {_noun_words(owner)}"


def _said_without_i(head: Token) -> bool:
    """A chat clause without its "I", told in the past ("sold the Volvo on saturday!!");
    not "was a long day" (what was, not what the user did)."""
    if head.lemma_ == "be":
        return False
    if _a_name_before(head):
        return False  # "Raj retired from dentistry": Raj did, read by the tagger as an adverb
    if _can_not(head) and (head.dep_ == "ROOT" or _spliced(head, head.head)):
        return True  # "can't watch The Office anymore, it annoys me now"
    if head.tag_ != "VBD" and not (
        head.tag_ == "VBN"
        and (any(c.dep_ in ("aux", "auxpass") for c in head.children) or _lemma(head) in ENDING)
    ):
        # "Based in Toronto these days": a description, not a chat clause; "Stepped down
        # from coaching", an ending the tagger took for a participle, is one.
        return False
    return head.dep_ == "ROOT" or (head.i < head.head.i and _spliced(head, head.head))


def _a_name_before(head: Token) -> bool:
    """A capitalised word the lexicon does not know before the verb: someone's name."""
    from memories.extraction.sentences import is_known_word

    return any(
        t.i < head.i and t.text[:1].isupper() and t.is_alpha and not is_known_word(t.lower_)
        for t in head.subtree
    )


def _a_name(token: Token) -> bool:
    """A capitalised proper noun that is not an acronym ("Sam", not "NASA")."""
    return (
        token.pos_ == "PROPN"
        and token.text[:1].isupper()
        and not (len(token.text) > 1 and token.text.isupper())
    )


def _a_person(token: Token) -> bool:
    """A name as people write one: capitalised, and not a place, firm or thing; not a
    word the tagger took for a name because it opens the sentence ("Nah, the Spanish one
    sounds ...", a second subject of the verb) or an acronym ("Use ISO dates")."""
    if token.pos_ != "PROPN" or not token.text[:1].isupper():
        return False
    if token.ent_type_ not in ("", "PERSON"):
        return False
    if len(token.text) > 1 and token.text.isupper():
        return False
    if any(c.pos_ in ("VERB", "AUX") for c in token.children):
        return False
    subjects = [c for c in token.head.children if c.dep_ in ("nsubj", "nsubjpass")]
    return len(subjects) == 1


def _noun_words(noun: Token) -> str:
    """The noun with its compounds and adjectives: "best friend", "older sister"."""
    words = [c.lower_ for c in noun.children if c.dep_ in ("amod", "compound") and c.i < noun.i]
    return " ".join([*words, noun.lemma_.lower()])


def _resolved(head: Token, people: list[str]) -> bool:
    """Whether the pronoun a stance or an ending is about names something said before
    ("olives have grown on me, I love them now", "update on the bouldering thing: I've gone
    off it"): then the parse reads it as that thing (the doc's ``antecedents``)."""
    verbs = {_lemma(head), *(_lemma(c) for c in head.children if c.dep_ in ("xcomp", "acomp"))}
    if not verbs & (ENDING | STANCE):
        return False
    pronoun = next(t for t in _objects(head) if t.lower_ in REFERRING)
    if pronoun.i + 1 < len(pronoun.doc) and pronoun.nbor(1).lower_ in ("here", "there"):
        return False  # "love it here": the place, said elsewhere
    thing = _antecedent(pronoun) or _antecedent_before(people)
    if not thing:
        return False
    head.doc.user_data.setdefault("antecedents", {})[pronoun.i] = thing
    return True


def _antecedent(pronoun: Token) -> str:
    """The nearest thing named before the pronoun in the message (not a person for "it")."""
    for chunk in reversed([c for c in pronoun.doc.noun_chunks if c.end <= pronoun.i]):
        root = chunk.root
        if root.pos_ == "PRON" or _a_reason(root):
            continue
        if pronoun.lower_ in ("it", "that", "this") and root.ent_type_ == "PERSON":
            continue
        words = value_of(root).split()
        while words and words[-1] in GENERIC:  # "the bouldering thing" -> "bouldering"
            words.pop()
        if words:
            return " ".join(words)
    return ""


def _a_reason(noun: Token) -> bool:
    """ "because of religion", "due to work": why, not what the pronoun names."""
    return any(a.lower_ in ("because", "due", "thanks") for a in list(noun.ancestors)[:3])


def _antecedent_before(people: list[str]) -> str:
    """The last thing the user's turn before named."""
    from spaceduck.core.parse import parse

    if not isinstance(people, _Earlier):
        return ""
    said = [text for role, text in people.before.turns() if role == "user"]
    if not said:
        return ""
    doc = parse(prepared(said[-1]))
    for chunk in reversed(list(doc.noun_chunks)):
        if chunk.root.pos_ != "PRON" and chunk.root.lower_ not in GENERIC:
            return value_of(chunk.root)
    return ""


def _pronoun_object(head: Token, words: frozenset[str]) -> bool:
    return any(t.lower_ in words for t in _objects(head))
