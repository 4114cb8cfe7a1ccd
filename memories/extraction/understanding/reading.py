"""Reading a sentence: its clauses one by one, what the rules read whole, and the claim
of a memory's own sentence."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from memories.extraction.claims import (
    HYPOTHETICAL,
    PAST,
    PAST_STATE,
    QUESTION,
    REPORTED,
    USER,
    Claim,
)
from memories.extraction.understanding.claims import _companions_of, _home, _read, _was
from memories.extraction.understanding.holders import (
    Before,
    _a_name,
    _Earlier,
    _holder,
    _pronoun_object,
    _relative_owner,
    _resolved,
    _said_without_i,
)
from memories.extraction.understanding.moods import (
    _conditional,
    _fronted,
    _home_is,
    _in_progress,
    _introduces,
    _modal,
    _mood,
    _passing,
    _past_state,
    _polarity,
    _reported_by_others,
)
from memories.extraction.understanding.render import render
from memories.extraction.understanding.statement import Statement, _Decline
from memories.extraction.understanding.tree import _aside, _clause_tokens, _heads, _subject
from memories.extraction.understanding.words import (
    _EMPTY_BRACKETS,
    GREETINGS,
    HABITUAL,
    HEDGE_WORDS,
    INTRODUCTION_NOUNS,
    MAX_PARSED_TOKENS,
    REFERRING,
    REPORTING,
    VAGUE,
    WANTING,
)

if TYPE_CHECKING:
    from spacy.tokens import Span, Token


_CANONICAL = re.compile(r"^The user(?:'s [a-z]+)? [a-z]")


def claim_of_sentence(content: str, now: datetime) -> Claim | None:
    """The claim of a memory's canonical sentence ("The user plays squash, usually on
    Tuesdays.") read from its parse, for the sentences the attribute readers
    (claims.derive) do not know: a rules' memory then has a claim an ending can end."""
    from spaceduck.core.parse import parse

    if not _CANONICAL.match(content) or len(content) > MAX_CLAIMED_CHARS:
        return None
    try:
        sentence = next(iter(parse(content).sents))
        statements = list(_clause(sentence.root, now, _Earlier(Before()), content))
    except _Decline:
        return None
    claims = [s.claim for s in statements if s.claim is not None]
    return claims[0] if claims else None


MAX_CLAIMED_CHARS = 300  # a memory's sentence longer than this says more than one thing


def _sentence(
    sentence: Span, now: datetime, people: list[str]
) -> tuple[list[Statement], list[str]]:
    """The statements the sentence's clauses make, and the clauses left to the rules (all
    of the sentence when the reader understood none of it)."""
    tokens = list(sentence)
    text = sentence.text.strip()
    if not any(t.is_alpha for t in tokens):
        return [], [text]
    if _for_the_rules_whole(sentence, text):
        return [], [text]
    if len(sentence) > MAX_PARSED_TOKENS:  # a run-on: the rules' linear reading
        return [], [text]
    statements: list[Statement] = []
    declined: list[Token] = []
    # In the order said: "My friend Ana lives in Porto; she loves surfing" names Ana first.
    heads = sorted(_heads(sentence.root), key=lambda head: head.i)
    for head in heads:
        try:
            statements += list(_clause(head, now, people, text))
        except _Decline:
            declined.append(head)
            _named(head, people)
        said = {s.content for s in statements}  # found again from each clause above it
        statements += [c for c in _companions_of(head, people, text) if c.content not in said]
    if not statements and len(declined) == len(heads):  # nothing of it understood
        return [], [_for_rules(sentence.root, list(sentence))]
    if any(_said_by_us(head) for head in declined):
        # "we" alone is a team or a household: the rules tell which from the whole sentence.
        return [], [_for_rules(sentence.root, list(sentence))]
    return statements, [_for_rules(head, _clause_tokens(head)) for head in declined]


def _named(head: Token, people: list[str]) -> None:
    """The subject of a clause left to the rules is still someone "he" or "she" can name
    next ("My son hates them and he plays football": the son)."""
    subject = _subject(head)
    if subject is not None and subject.lower_ not in ("he", "she", "they"):
        with contextlib.suppress(_Decline):
            _holder(subject, people)


def _after_someone(people: list[str]) -> bool:
    return isinstance(people, _Earlier) and people.named_here()


def _said_by_us(head: Token) -> bool:
    subject = _subject(head)
    return subject is not None and subject.lower_ == "we"


def _for_the_rules_whole(sentence: Span, text: str) -> bool:
    """Shapes the rules read better whole: a question (and the statement before it), a list
    under a heading, a greeting and introduction."""
    root = sentence.root
    lowers = {t.lower_ for t in sentence}
    return (
        bool(lowers & HEDGE_WORDS)
        or _introduces_the_user(sentence)
        or "?" in text
        or ":" in text
        or "\n" in text
        or any(c.dep_ == "intj" and c.lower_ in GREETINGS for c in root.children)
        or root.lower_ in ("hi", "hello", "hey")
    )


def _introduces_the_user(sentence: Span) -> bool:
    """ "my name is ...", "my email is ...": the regex stage's, not "my brother's email"."""
    return any(
        t.lower_ in INTRODUCTION_NOUNS
        and not _relative_owner(t.head if t.dep_ == "compound" else t)
        and not any(  # "Sam's number": Sam's
            c.dep_ == "poss" and _a_name(c)
            for c in (t.head if t.dep_ == "compound" else t).children
        )
        for t in sentence
    )


def _for_rules(head: Token, tokens: list[Token]) -> str:
    """A clause's words for the rules, without another person's email or phone in
    apposition ("my boss Tom (tom@corp.example)": not the user's address)."""
    drop: set[int] = set()
    for token in tokens:
        contact = "@" in token.text or sum(ch.isdigit() for ch in token.text) >= 7
        if token.dep_ == "appos" and contact and token.head.dep_ != "attr":
            drop.update(t.i for t in token.subtree)
    words = [t for t in tokens if t.i not in drop]
    text = "".join(t.text_with_ws for t in words).strip()
    text = _EMPTY_BRACKETS.sub("", text) if drop else text
    subject = _subject(head)
    if subject is not None and subject.i not in {t.i for t in tokens}:
        text = f"{subject.text} {text}"  # "... and work at the library": "I work at ..."
    return text.rstrip(" ,;") + ("" if text.endswith((".", "!", "?")) else ".")


def _clause(head: Token, now: datetime, people: list[str], text: str) -> Iterator[Statement]:
    subject = _subject(head)
    if _reported_by_others(head, subject):
        return  # "people keep telling me I'm ...", "my coach insists I'm ...": their words
    if head.i + 1 < len(head.doc) and not head.whitespace_ and head.nbor(1).text == "-":
        raise _Decline  # "left-handed": a word in a compound, not the verb "leave"
    if head.dep_ == "ROOT" and head.tag_ == "VB" and subject is None:
        raise _Decline  # an instruction: the rules' procedures
    if head.lemma_ in WANTING or _passing(head) or _in_progress(head):
        raise _Decline  # a request, a passing state: the rules'
    if any(c.lower_ == "please" for c in head.children):
        raise _Decline  # "... and please don't suggest GUI tools": a request, not a state
    if any(c.dep_ == "dep" and not _aside(c, subject) for c in head.children):
        raise _Decline  # a word the parser could not attach: it did not read the clause
    if _pronoun_object(head, REFERRING) and not _resolved(head, people):
        raise _Decline  # "I've increased it to 10 km": what "it" is, the rules ask a person
    if any(c.dep_ in ("dobj", "attr") and c.lower_ in VAGUE for c in head.children):
        return  # "I eat everything now": names nothing to keep
    if _introduces(head) or any(c.lower_ in HABITUAL for c in head.children):
        raise _Decline  # "I'm Tomasz, 45": the regex stage's; "always", "only": procedures
    if _fronted(head, subject) or _modal(head):
        raise _Decline  # "For hotfixes we ...": a workflow; "I'd rather": the rules'
    if any(c.dep_ == "prep" and c.lower_ == "according" for c in head.children):
        return  # "according to my manager, ...": their word
    mood = _mood(head, subject)
    if mood == HYPOTHETICAL and not _conditional(head):
        raise _Decline  # hedged ("might get a cat"): the rules hold it loosely
    if mood in (HYPOTHETICAL, QUESTION, REPORTED):
        return  # understood, and nothing to keep: not the user's belief
    if _home_is(head):  # the user's, whoever the parser made the subject
        yield from _home(head, text)
        return
    if subject is None and _after_someone(people) and _said_without_i(head):
        return  # "Our neighbour Jim ... Stepped down from ...": Jim's maybe, not the user's
    holder = _holder(subject, people, head)
    complement = next((c for c in head.children if c.dep_ == "ccomp"), None)
    if head.lemma_ in REPORTING and complement is not None:
        if holder != USER:
            return  # "my friend thinks I should...": their words
        yield from _clause(complement, now, people, text)  # "I think I'm allergic to cats"
        return
    if mood == PAST_STATE:
        inner = next(c for c in head.children if c.dep_ == "xcomp")
        yield from _was(_read(inner, holder, now, text, PAST), render(head, holder))
        return
    if _past_state(head):  # "I was vegan for years", "we had a pony when I was a kid"
        yield from _was(_read(head, holder, now, text, PAST), "")
        return
    yield from _read(head, holder, now, text, _polarity(head))
