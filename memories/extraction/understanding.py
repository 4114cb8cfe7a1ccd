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
"""

from __future__ import annotations

import calendar
import itertools
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from memories.extraction.claims import (
    ABOUT,
    AFFIRMED,
    ASSERTED,
    HYPOTHETICAL,
    NEGATED,
    PAST,
    PAST_STATE,
    QUESTION,
    RELATIVES,
    REPORTED,
    USER,
    Claim,
    derive,
    folded,
)
from memories.extraction.types import SLOTS
from memories.extraction.validity import Validity, validity_of

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

logger = logging.getLogger(__name__)

# Verbs that end what their object or complement names ("gave up the trumpet", "stopped
# playing the piano", "sold my scooter").
ENDING = frozenset(
    {
        "stop", "quit", "give_up", "sell", "leave", "drop", "ditch", "cancel", "abandon",
        "pack_in", "trade", "swap", "get_rid_of", "retire_from", "lose",
        "kick", "go_off", "rid", "delete", "uninstall", "unsubscribe", "step_down", "resign",
        "move_out", "part_with", "give_away", "throw_away", "throw_out", "bin", "replace",
    }
)  # fmt: skip
# What one holds of a thing rather than the thing ("my membership at the gym").
HOLDING = frozenset(
    {"membership", "subscription", "account", "contract", "plan", "pass", "ticket", "lease",
     "policy", "card", "licence", "license", "place", "spot", "seat"}
)  # fmt: skip
# Verbs that hand one thing in for another ("swapped my scooter for a bicycle").
EXCHANGE = frozenset({"trade", "swap", "exchange", "replace"})
# A verb whose clause only entertains its complement ("thinking about moving").
ENTERTAIN = frozenset(
    {"plan", "consider", "think", "hope", "dream", "wonder", "debate", "contemplate"}
)
# Saying or thinking, by someone other than the user: their words, not the user's.
REPORTING = frozenset(
    {"say", "think", "tell", "reckon", "believe", "claim", "suggest", "insist", "feel", "want"}
)
# Wanting or looking for something: a request, not a fact.
WANTING = frozenset({"need", "want", "look", "try", "wish", "seek", "search"})
# Words that make a whole sentence uncertain: the rules hold it loosely (a lower confidence).
GREETINGS = frozenset(
    {"hi", "hello", "hey", "hiya", "heya", "howdy", "morning", "evening", "yo", "sup", "greetings"}
)
INTENSIFIERS = frozenset({"right", "totally", "completely", "absolutely", "so", "really"})
# "done with X", "over X", "finished with X": ended; "sick of X", "tired of X": gone off it.
DONE_WITH = frozenset({"done", "finished", "over", "through"})
SICK_OF = frozenset({"sick", "tired", "bored", "fed"})
HEDGE_WORDS = frozenset(
    {"sure", "guess", "suppose", "kind", "sort", "probably", "maybe", "perhaps", "possibly",
     "think", "believe", "reckon", "apparently", "lol", "haha", "jk", "kidding"}
)  # fmt: skip
# Words that put a time in the past ("in March", "last week", "two years ago").
PAST_WORDS = frozenset(
    {"ago", "yesterday", "last", "january", "february", "march", "april", "may", "june", "july",
     "august", "september", "october", "november", "december", "earlier", "previously"}
)  # fmt: skip
# Said in the progressive, these last ("I'm learning Italian", "I'm living in Porto").
LASTING = frozenset(
    {"live", "learn", "study", "work", "teach", "stay", "train", "play", "date", "raise", "run"}
)
# Verbs that say nothing without their object ("go", "get", "make", "do").
LIGHT = frozenset({"go", "come", "get", "make", "do", "take", "put", "be", "have", "become"})
HABITUAL = frozenset({"always", "never", "only", "whenever"})
MOMENT = frozenset({"today", "tonight", "tomorrow", "yesterday", "right", "moment"})
# Objects that name nothing ("I take it every morning", "I eat everything now").
# Verbs of liking and disliking, whose object a pronoun often names ("I love them now").
STANCE = frozenset({"like", "love", "enjoy", "adore", "hate", "dislike", "stand", "miss", "mind"})
# Nouns that name nothing by themselves ("update on the bouldering thing").
GENERIC = frozenset({"thing", "things", "update", "bit", "lot", "stuff", "way", "time", "day"})
REFERRING = frozenset({"it", "that", "this", "them", "one", "these", "those"})
VAGUE = frozenset(
    {"everything", "something", "anything", "nothing", "stuff", "things", "lot", "much", "lots",
     "enough"}
)  # fmt: skip
# Verbs of the conversation itself: without an object they say nothing about the user
# ("I know, I know", "I see", "I guess", "I agree").
DISCOURSE = frozenset(
    {"know", "see", "guess", "mean", "agree", "understand", "suppose", "bet", "promise",
     "swear", "wonder", "hope", "admit", "remember", "forget", "care", "get"}
)  # fmt: skip
HEDGES = frozenset({"maybe", "perhaps", "possibly", "probably"})
UNSURE_MODALS = frozenset({"might", "may", "could", "would", "'d", "should"})
# Words that say nothing about what is claimed ("drinks oolong as well").
FILLERS = frozenset(
    {"too", "also", "anyway", "honestly", "really", "just", "basically", "literally", "mostly",
     "lately", "recently"}
)  # fmt: skip
# Nouns a subject may be the user's by ("my name is ...": the regex stage reads those).
INTRODUCTION_NOUNS = frozenset(
    {"name", "email", "e-mail", "number", "phone", "birthday", "pronoun", "address", "age",
     "password", "passphrase", "pin", "passcode", "key", "token", "secret", "login"}
)  # fmt: skip
# A place or affiliation said with one of these prepositions has one value at a time.
FUNCTIONAL_PREPS = frozenset({"in", "at", "for"})
# Prepositions whose object says when, with whom or why, never what the verb is about.
NOT_WHAT = frozenset({"until", "till", "since", "with", "because"})
# Where one lives, works or studies: one place at a time ("teaches at the primary school").
# Other verbs with a place ("swims at the lido") are about the activity: "about:swim".
LOCATIVE = frozenset({"at", "in", "on", "near", "by", "around", "inside", "outside"})
AFFILIATION = frozenset({"live", "work", "teach", "study", "stay", "reside", "volunteer"})
# Living or being somewhere with someone or something ("live in Leeds with our dog").
COMPANION_VERBS = frozenset({"live", "be", "stay", "move", "settle", "share"})
STATIVE = frozenset(
    {
        "live",
        "work",
        "teach",
        "study",
        "stay",
        "be",
        "have",
        "own",
        "play",
        "like",
        "love",
        "get",
        "know",
        "keep",
        "speak",
        "use",
        "drink",
        "eat",
    }
)
_SPACE = re.compile(r"\s+")
_AGE = re.compile(r"\b\d+\s*(?:years?|yrs?|yo)\b")
# Longer than this, a message is not parsed (the rules read it, said in the extraction
# record), nor a sentence longer than MAX_PARSED_TOKENS: a parse costs ~4 ms a sentence, and
# reading one clause walks its subtree, so a run-on of thousands of words would take minutes.
MAX_PARSED_CHARS = 20_000
MAX_PARSED_TOKENS = 120
# The people a user's noun can name ("my sister", "my colleague"): they hold their own claims.
RELATION = re.compile(rf"(?:{RELATIVES}|wife|kid|child|baby|parent|partner|mate|pal|flatmate)")
_EMPTY_BRACKETS = re.compile(r"\s*\(\s*\)|\s*\((?=\s*\w+\s*$)|\s+\)(?=\s)")


@dataclass(frozen=True)
class Statement:
    """One thing a clause says, as a canonical third-person sentence with its claim."""

    content: str
    claim: Claim | None
    kind: str = "fact"
    validity: Validity = field(default_factory=Validity)
    sentence: str = ""
    occurred_at: datetime | None = None  # a past state's end (or start), when said
    ends: str = ""  # what an ending names ("climbing gym"): the facts naming it end with it


@dataclass
class Reading:
    statements: list[Statement] = field(default_factory=list)
    rest: str = ""  # the sentences the reader did not own, for the rules
    notes: list[str] = field(default_factory=list)  # why a sentence fell back to the rules


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


class _Earlier(list[str]):
    """The people named in this message (a list), and the conversation to look back into."""

    def __init__(self, before: Before) -> None:
        super().__init__(before.holders)
        self.before = before


class _Decline(Exception):
    """The reader does not understand this clause well enough: the rules read it."""


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
        said = {s.content for s in statements}  # found again from each clause above it
        statements += [c for c in _companions_of(head, people, text) if c.content not in said]
    if not statements and len(declined) == len(heads):  # nothing of it understood
        return [], [_for_rules(sentence.root, list(sentence))]
    if any(_said_by_us(head) for head in declined):
        # "we" alone is a team or a household: the rules tell which from the whole sentence.
        return [], [_for_rules(sentence.root, list(sentence))]
    return statements, [_for_rules(head, _clause_tokens(head)) for head in declined]


def _said_by_us(head: Token) -> bool:
    subject = _subject(head)
    return subject is not None and subject.lower_ == "we"


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
        return people[-1]
    if lower in ("he", "she") and isinstance(people, _Earlier) and people.before.people():
        return people.before.people()[-1]
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


def _can_not(head: Token) -> bool:
    """ "can't watch ...", "cannot eat ...": what the user can no longer do, in chat."""
    children = list(head.children)
    return (
        head.tag_ == "VB"
        and any(c.tag_ == "MD" and c.lower_ in ("ca", "can", "cannot") for c in children)
        and any(c.dep_ == "neg" for c in children)
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


def _owner(noun: Token) -> str:
    for child in noun.children:
        if child.dep_ == "poss" and child.lower_ in ("my", "our"):
            return USER
    return ""


def _noun_words(noun: Token) -> str:
    """The noun with its compounds and adjectives: "best friend", "older sister"."""
    words = [c.lower_ for c in noun.children if c.dep_ in ("amod", "compound") and c.i < noun.i]
    return " ".join([*words, noun.lemma_.lower()])


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


def _home(head: Token, text: str) -> Iterator[Statement]:
    """ "these days home is Boston", "home's Lisbon now": where the user lives."""
    place = next((c for c in head.children if c.dep_ in ("attr", "acomp")), None)
    if place is None or _told_in_the_past(head):
        raise _Decline
    content = f"The user's home is {place.text}."
    yield Statement(content, derive(content), "fact", Validity(), text)


def _past_state(head: Token) -> bool:
    """A state told in the past tense (not an event: "moved", "started" are the rules')."""
    return (
        head.tag_ == "VBD"
        and (head.lemma_ in STATIVE or head.lemma_ == "be")
        and head.lemma_ != "get"  # "got a job", "we've got a cat": had from then on, or has
        and not any(c.dep_ == "neg" for c in head.children)
    )


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


def _lemma(head: Token) -> str:
    """The verb with its particle: "give_up", "pack_in"."""
    particles = [c.lower_ for c in head.children if c.dep_ == "prt"]
    lemma = "_".join([head.lemma_.lower(), *particles])
    if not particles:  # "gone off it": the parser took the particle for a preposition
        phrasal = (f"{lemma}_{c.lower_}" for c in head.children if c.dep_ == "prep")
        lemma = next((p for p in phrasal if p in ENDING), lemma)
    return lemma


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


def _holder_words(holder: str) -> str:
    if holder == USER:
        return "The user"
    if holder.startswith("user's "):
        return f"The user's {holder[7:]}"
    return holder.title()


def _phrase(token: Token, *, keep_appos: bool = True) -> str:
    words = [
        t
        for t in token.subtree
        if keep_appos or not any(a.dep_ == "appos" for a in [t, *t.ancestors] if a is not token)
    ]
    return " ".join(t.text for t in words if t.dep_ != "punct")


# --- rendering a clause in the third person ------------------------------------------------

_PERSON = {"i": "the user", "me": "the user", "my": "their", "mine": "theirs", "we": "the user",
           "us": "the user", "our": "their", "ours": "theirs", "myself": "themselves",
           "ourselves": "themselves"}  # fmt: skip
_THIRD = {"am": "is", "'m": "is", "are": "is", "'re": "is", "was": "was", "were": "was",
          "have": "has", "'ve": "has", "do": "does", "ca": "can", "wo": "will"}  # fmt: skip
_ES = ("s", "sh", "ch", "x", "z", "o")
_PLURAL = {"'re": "are", "'ve": "have", "'d": "would", "'ll": "will"}


def render(
    head: Token,
    holder: str,
    obj: Token | None = None,
    variant: Token | None = None,
    chain: list[Token] | None = None,
) -> str:
    """The clause as a canonical sentence: "The user plays the piano."; with ``variant``,
    the object ``obj`` is that conjunct of ``chain`` alone ("is allergic to shellfish")."""
    keep = _clause_tokens(head)
    if obj is not None and variant is not None and chain and len(chain) > 1:
        keep = _one_conjunct(keep, obj, variant, chain)
    while keep and (keep[-1].is_punct or keep[-1].dep_ == "cc"):
        keep.pop()
    keep = _without_opener(head, keep)
    subject = _subject(head)
    # "Tom, my flatmate, works at Google": no comma between the subject and its verb.
    keep = [
        t
        for t in keep
        if not (t.lower_ == "," and subject is not None and t.i == subject.i + 1 == head.i - 1)
    ]
    words: list[str] = []
    subject_done = False
    for token in keep:
        lower = token.lower_
        if token.dep_ in ("nsubj", "nsubjpass") and not subject_done and lower in ("i", "we"):
            # "we" at home: the user and their family, as the readers of claims take it
            words.append("The user" if lower == "i" else "The user and their family")
            subject_done = True
            continue
        if (
            token.dep_ in ("nsubj", "nsubjpass")
            and lower in ("he", "she", "they")
            and holder != USER
        ):
            words.append(_holder_words(holder))
            continue
        if token.i in token.doc.user_data.get("antecedents", {}):
            words.append(token.doc.user_data["antecedents"][token.i])
        elif lower in ("my", "our") and not words:
            words.append("The user's")
        elif lower in ("my", "our") and holder != USER and token.tag_ == "PRP$":
            words.append("the user's")  # "Marta covers my on-call": the user's, not Marta's
        elif lower in _PERSON and token.tag_ in ("PRP", "PRP$"):
            words.append(_PERSON[lower])
        elif lower == "n't":
            words.append("not")
        elif lower in ("ca", "wo") and token.tag_ == "MD":
            words.append(_THIRD[lower])
        elif lower in _PLURAL and subject_done and words[0].endswith("family"):
            words.append(_PLURAL[lower])  # "we're" -> "the user and their family are"
        elif _finite_first_person(token, holder):
            words.append(_third_person(token))
        elif token is head and _bare_conjunct(head):
            words.append(_third_person(token, verb=True))
        else:
            words.append(token.text)
    sentence = _join(words, keep)
    if _subject(head) is None and _said_without_i(head):
        sentence = f"The user {sentence[:1].lower()}{sentence[1:]}"
    elif (
        head.dep_ == "conj"
        and _subject(head) is not None
        and all(c.dep_ not in ("nsubj", "nsubjpass") for c in head.children)
    ):
        sentence = f"{_holder_words(holder)} {sentence}"
    sentence = _NO_LONGER.sub(_no_longer, sentence.replace("can not ", "cannot "))
    sentence = sentence[:1].upper() + sentence[1:]
    return sentence.rstrip(" ,;:-") + "."


_NO_LONGER = re.compile(r"\b(?:(?:does|do) not|(is|are|was) not)\b(.*?)\s*\bany ?more\b")


def _no_longer(found: re.Match[str]) -> str:
    """ "does not play tennis anymore" -> "no longer plays tennis", as the readers and
    people expect it; "is not vegetarian anymore" -> "is no longer vegetarian"."""
    if found.group(1):
        return f"{found.group(1)} no longer{found.group(2)}"
    verb, _, tail = found.group(2).strip().partition(" ")
    return f"no longer {_third_word(verb)} {tail}".rstrip()


def _third_word(verb: str) -> str:
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + ("es" if verb.endswith(_ES) else "s")


def _one_conjunct(keep: list[Token], obj: Token, variant: Token, chain: list[Token]) -> list[Token]:
    """The clause's words with ``variant`` alone where the coordinated objects stood."""
    own = _own(variant)
    mine = {t.i for t in own}
    gone = {t.i for c in chain for t in c.subtree} - mine
    at = min(t.i for t in _own(obj))
    kept = [t for t in keep if t.i not in gone]
    return [t for t in kept if t.i < at] + own + [t for t in kept if t.i > at and t.i not in mine]


def _without_opener(head: Token, tokens: list[Token]) -> list[Token]:
    """Without what is said before the subject ("Actually, I ...", "Oh, we ..."): the
    message keeps it (the memory's context), the canonical sentence starts with its subject."""
    subject = _subject(head)
    if subject is None:  # a chat clause: what comes before its verb ("already on it, got rid")
        gone = {
            t.i
            for c in head.children
            if c.i < head.i and c.dep_ not in ("aux", "auxpass", "neg")
            for t in c.subtree
        }
        return [t for t in tokens if t.i not in gone]
    gone = {
        t.i
        for c in head.children
        if c.i < subject.i
        and (c.dep_ in ("advmod", "intj", "punct", "cc") or _time_frame(c) or _aside(c, subject))
        for t in c.subtree
    }
    return [t for t in tokens if t.i not in gone]


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


def _finite_first_person(token: Token, holder: str) -> bool:
    """A verb agreeing with "I" or "we": the first auxiliary, or the verb when it has none
    (not a past with the present's form: "I quit in March")."""
    if _past_same_form(token):
        return False
    if token.tag_ not in ("VBP", "VB", "VBD") or (
        token.tag_ == "VB"
        and any(c.dep_ in ("aux", "auxpass") or c.tag_ == "TO" for c in token.children)
    ):
        return False
    if token.tag_ == "VB" and token.dep_ in ("xcomp", "aux", "conj"):
        return False
    subject = _subject(token if token.dep_ not in ("aux", "auxpass") else token.head)
    return subject is not None and subject.lower_ == "i"


def _bare_conjunct(head: Token) -> bool:
    """A coordinated verb sharing the first clause's subject ("... and work at ...")."""
    return (
        head.dep_ == "conj"
        and head.tag_ in ("VBP", "VB", "NN")
        and not any(c.dep_ in ("nsubj", "aux") for c in head.children)
    )


def _third_person(token: Token, *, verb: bool = False) -> str:
    lower = token.lower_
    if lower in _THIRD:
        return _THIRD[lower]
    if token.tag_ not in ("VBP", "VB") and not verb:
        return token.text
    word = token.text
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(_ES) else "s")


def _join(words: list[str], tokens: list[Token]) -> str:
    out = ""
    before: Token | None = None
    for word, token in zip(words, tokens, strict=True):
        glued = word.startswith("'") or (token.is_punct and word not in ("(", '"'))
        # "left-handed", "e-mail": written together, kept together (words not rewritten)
        together = (
            before is not None
            and before.i == token.i - 1
            and not before.whitespace_
            and word == token.text
            and out.endswith(before.text)
        )
        if out and not (glued or together):
            out += " "
        out += word
        before = token
    return _SPACE.sub(" ", out).replace("( ", "(").strip()
