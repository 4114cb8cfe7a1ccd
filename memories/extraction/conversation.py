"""Reading a message with the turns before it: short answers and corrections.

A message is often only understood with the conversation: "Ghent." answers the
assistant's "Which city are you in?", "make it seven" changes the "six people" said a
turn before, "it's Kathryn, K-A-T-H-R-Y-N" respells a name. Here:

- ``answer_to(question, reply)``: the statement a short reply makes, in the user's words
  ("I am in Ghent."), for the parse to read as if the user had said it;
- ``correction_in(text)``: what a correcting message replaces, with what (an explicit
  "not X but Y", "I meant Y", "make it Y", a spelling);
- ``corrected(memories, correction)``: the memories the correction rewrites, each with
  its new content (the decision step then supersedes the old one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memories.extraction.claims import NUMBER_WORDS
from memories.extraction.understanding.words import RELATION

if TYPE_CHECKING:
    from spacy.tokens import Token

# A reply this short (in words) to a question is an answer, not a statement of its own.
MAX_ANSWER_WORDS = 8
_WH = re.compile(
    r"\b(?:which|what)\s+(?P<noun>[a-z]+)\s+(?P<verb>are|were|do|did)\s+you\s+(?P<rest>[^?]*)\?",
    re.I,
)
_HOW_MANY = re.compile(r"\bhow many\s+(?P<noun>[a-z]+)", re.I)
_ANY = re.compile(
    r"(?:^|[.!]\s+|\bor\s+)(?:any|do you have any)\s+(?P<noun>[a-z]+(?:\s+[a-z]+)?)\s*\?", re.I
)
_ANSWER_END = re.compile(r"\s*(?:[,.;!?]|\s-\s|\s+so\s+|\s+but\s+|\s+and\s+).*$", re.I)
_NUMBER = r"\d+|" + "|".join(k for k in NUMBER_WORDS if len(k) > 2)
_LEADING_NUMBER = re.compile(rf"^(?P<n>{_NUMBER})\b", re.I)


def answer_to(question: str, reply: str) -> str | None:
    """The user's reply as the statement it makes, or None when it is not a short answer
    to one of the questions this understands."""
    asked = _last_question(question)
    if not asked:
        return None
    said = _yes_or_no(asked, reply)
    if said:
        return said
    answer = _answer(reply)
    if not answer:
        return None
    if (found := _HOW_MANY.search(asked)) is not None:
        number = _LEADING_NUMBER.match(answer)
        count = number.group("n").lower() if number else ""
        return f"I have {count} {found.group('noun')}." if number else None
    if (found := _WH.search(asked)) is not None:
        verb = {"are": "am ", "were": "was "}.get(found.group("verb").lower(), "")
        rest, when = _when_last(found.group("rest").strip())
        return f"I {verb}{rest} {answer}{when}."
    if (found := _ANY.search(asked)) is not None and answer.lower() not in ("no", "none", "nope"):
        return f"The user's {found.group('noun').lower()} include {answer}."
    if _WHAT_DO_YOU_DO.search(asked):  # "What do you do at the moment?" "payroll"
        return f"The user's work is {answer}."
    if (found := _WHICH_ALONE.search(asked)) is not None:  # "Which language?" "Japanese"
        return f"The user's {found.group('noun').lower()} is {answer}."
    return None


_WHICH_ALONE = re.compile(r"\b(?:which|what)\s+(?P<noun>[a-z]+)\s*\?", re.I)
# A question about the user that a yes or a no answers ("Do you eat meat?" "nope").
_DO_YOU = re.compile(
    r"^(?:and\s+|so\s+)?do you (?P<rest>[^?,]+?)(?:\s+much)?(?:,?\s+or\s+[^?]*)?\?$", re.I
)
_WHAT_DO_YOU_DO = re.compile(r"\bwhat do you do\b[^?]*\?", re.I)
_STILL = re.compile(r"^(?:are you\s+)?still (?P<prep>in|at|with) (?P<old>[^?]+)\?$", re.I)
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|definitely|absolutely)\b", re.I)
_NO = re.compile(r"^(?:no|nope|nah|not really|never|not at all)\b", re.I)
_RARELY = re.compile(r"^(?:hardly ever|rarely|barely|seldom|not much|not often)\b", re.I)
_NO_VALUE = re.compile(r"^(?:no|nope|nah)[,.!]*\s+(?P<new>[A-Z][\w' -]*?)(?=[,.!;]|\s+since\b|$)")


def could_answer(reply: str) -> bool:
    """Whether a reply may be a short answer (few words, none of them "I" or "my"): only
    then is the question before it read."""
    text = reply.strip()
    return 0 < len(text.split()) <= MAX_ANSWER_WORDS and not _SAYS_ITSELF.search(text)


def _yes_or_no(asked: str, reply: str) -> str:
    """ "Do you eat meat?" + "nope" -> "I do not eat meat."; "Still in Leicester?" + "nope,
    Nottingham since the spring" -> "I am in Nottingham now."; "" when it is not that."""
    text = reply.strip()
    if len(text.split()) > MAX_ANSWER_WORDS or _SAYS_ITSELF.search(text):
        return ""
    if (found := _STILL.search(asked)) is not None:
        moved = _NO_VALUE.match(text)
        return f"I am {found.group('prep')} {moved.group('new')} now." if moved else ""
    found = _DO_YOU.search(asked)
    if found is None:
        return ""
    rest = found.group("rest").strip()
    if _RARELY.match(text):
        return f"I rarely {rest}."
    if _NO.match(text):
        return f"I do not {rest}."
    if _YES.match(text):
        return f"I {rest}."
    return ""


_WHEN_WORDS = re.compile(r"\s+\b(now|these days|currently|at the moment|nowadays)$", re.I)


def _when_last(rest: str) -> tuple[str, str]:
    """ "in now" -> ("in", " now"): the question's time word goes after the answer."""
    found = _WHEN_WORDS.search(rest)
    if found is None:
        return rest, ""
    return rest[: found.start()], f" {found.group(1)}"


def _answer(reply: str) -> str:
    """The answer at the start of a short reply: "Halifax, the Canadian one" -> "Halifax"."""
    text = reply.strip()
    if not text or len(text.split()) > MAX_ANSWER_WORDS or "?" in text or _SAYS_ITSELF.search(text):
        return ""
    answer = _ANSWER_END.sub("", text).strip(" !.-")
    return answer if len(answer.split()) <= MAX_ANSWER_CORE else ""


# A reply with its own subject says its own statement ("I moved to Tokyo last month").
_SAYS_ITSELF = re.compile(r"\b(?:i|i'm|im|we|we're|my|our)\b", re.I)
MAX_ANSWER_CORE = 4


def _last_question(text: str) -> str:
    """The last sentence that asks something ("Sure - which city are you in?")."""
    pieces = re.split(r"(?<=[.!?])\s+", text.strip())
    asked = [p for p in pieces if p.endswith("?")]
    return asked[-1] if asked else ""


@dataclass(frozen=True)
class Correction:
    new: str  # what is meant
    old: str = ""  # what it replaces, when said ("not Vienna but Venice")
    spelling: bool = False  # the same name, spelt otherwise


_SIGNAL = r"(?:i meant|i mean|sorry|oops|no wait|wait|correction|typo|actually|my bad|i spelled)"
_NOT_BUT = re.compile(r"\bnot (?P<old>[\w' -]+?) but (?P<new>[\w' -]+?)(?=[.,!;]|$)", re.I)
_NEW_NOT_OLD = re.compile(
    r"\b(?:i meant|it'?s|make (?:it|that))\s+(?P<new>[\w' -]+?),?\s+not\s+(?P<old>[\w' -]+?)"
    r"(?=[.,!;]|\s+typo|$)",
    re.I,
)
_MEANT = re.compile(
    r"\b(?:i meant|it'?s actually|it'?s|actually)\s+"  # "make it": _MAKE_IT, read first
    r"(?P<new>[\w'-]+(?:\s+[\w'-]+)?)",
    re.I,
)
# A count said again with "now" and nothing else ("so six now!", "up to four now").
_NUMBER_NOW = re.compile(
    rf"(?:^|[,.!;]\s*|\bso\s+|\bup to\s+)(?P<new>{_NUMBER})\s+now\b(?=\s*[.!]*\s*$)", re.I
)
# "wait no, fourth floor": the signal, then the new value alone before the full stop.
_SIGNAL_THEN = re.compile(
    rf"^\W*{_SIGNAL}\W+(?:no\W+)?(?P<new>[\w'-]+(?:\s+[\w'-]+)?)\s*(?=[.,!;]|$)", re.I
)
_ORDINAL = (
    r"\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth"
)
_MAKE_IT = re.compile(r"\bmake (?:it|that)\s+(?P<new>[\w'-]+(?:\s+[\w'-]+)?)", re.I)
_SPELLED = re.compile(r"\b(?:[A-Z]-){2,}[A-Z]\b")
_WITH_LETTER = re.compile(r"\b(?:with|without) an? [a-z]\b|\b[a-z] before [a-z]\b", re.I)


def correction_in(text: str) -> Correction | None:
    """What a correcting message means, or None when it does not correct anything."""
    if (found := _NUMBER_NOW.search(text)) is not None:
        return Correction(new=found.group("new"))  # "two more hatched, so six now!"
    if not re.search(_SIGNAL, text, re.I) and not re.search(r"\bmake (?:it|that)\b", text, re.I):
        return None
    for pattern in (_NOT_BUT, _NEW_NOT_OLD):
        if (found := pattern.search(text)) is not None:
            return Correction(new=_word(found.group("new")), old=_word(found.group("old")))
    spelling = bool(_SPELLED.search(text) or _WITH_LETTER.search(text) or "spell" in text.lower())
    found = _MAKE_IT.search(text) or _MEANT.search(text) or _SIGNAL_THEN.search(text)
    if found is not None:
        return Correction(new=_word(found.group("new")), spelling=spelling)
    name = _NAME.search(text) if spelling else None  # "... wrong before - Michael, a before e"
    return Correction(new=name.group(0), spelling=True) if name else None


_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b(?!I\b)[A-Z][a-z]+\b")


# A count said again: a number in a short message ("cut down to two a day", "it's more like
# five", "hit 25 yesterday", "did 14 km on sunday"), read from the parse.
MAX_COUNT_WORDS = 14
_A_NUMBER = re.compile(rf"\b(?:{_NUMBER})\b", re.I)
_CLOCK = frozenset({"at", "by", "around", "before", "after", "pm", "am", "o'clock", "on"})


def count_update(text: str, memories: list[tuple[int, str]]) -> Rewrite | None:
    """The recent memory a new count changes, rewritten with it; None when the message
    says no count, or no recent memory counts the same thing.

    The count's unit decides: "14 km" changes the memory that says "8 km"; a bare number
    ("more like five", "hit 25") changes the newest memory with one number, when the
    message names nothing else to count and is not a time or an age ("at 5", "I'm 34")."""
    if not says_a_number(text):
        return None
    from spaceduck.core.parse import parse

    numbers = [t for t in parse(text) if t.like_num and _A_NUMBER.fullmatch(t.text)]
    if len(numbers) != 1:
        return None
    number = numbers[0]
    memories = _held_by_the_counter(number, memories)
    if number.dep_ == "nummod" and number.head.pos_ == "NOUN":
        return _same_unit(number.text, number.head.lemma_.lower(), memories)
    if _an_age(number) or number.head.lower_ in _CLOCK:
        return None  # "I'm 34": an age; "at 5": a time
    verb = next((a for a in number.ancestors if a.pos_ in ("VERB", "AUX")), None)
    if verb is None or not _changes_an_amount(verb):
        return None  # "I bought 3 yesterday": a number, not the count said again
    if any(c.pos_ in ("NOUN", "PROPN") and c.dep_ in ("dobj", "nsubj") for c in verb.children):
        return None  # a count of something the clause names ("since the baby arrived,
        # it's more like five" is read: the baby is another clause's)
    counted = [(i, c) for i, c in memories if len(_A_NUMBER.findall(c)) == 1]
    if not counted:
        return None
    return _rewrite(counted[-1], number.text)


def _held_by_the_counter(number: Token, memories: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The memories of whoever says the count: "did 14 km on sunday" (the user) never
    rewrites "The user's brother runs about 10 km"; "he hit 25" never the user's count.
    "it's more like five" names nobody, and may change anyone's."""
    verb = next((a for a in number.ancestors if a.pos_ in ("VERB", "AUX")), None)
    subject = next((c for c in verb.children if c.dep_ == "nsubj"), None) if verb else None
    if subject is not None and subject.lower_ in ("it", "that", "this"):
        return memories
    users = subject is None or subject.lower_ in ("i", "we")
    return [(i, c) for i, c in memories if _the_users(c) == users]


def _the_users(content: str) -> bool:
    """A memory's sentence about the user ("The user's longest run ..."), not "The user's
    brother ..." or "Sam ..."."""
    if content.startswith("The user "):
        return True
    words = (
        content.removeprefix("The user's ").split()[:3] if content.startswith("The user's ") else []
    )
    return bool(words) and not any(RELATION.fullmatch(w.strip(",.").lower()) for w in words)


# Verbs that change an amount, or say it again ("it's more like five").
AMOUNT_CHANGE = frozenset(
    {"cut", "reduce", "increase", "drop", "lower", "raise", "bump", "hit", "reach", "double",
     "halve", "go", "get", "be", "up", "down", "manage", "do"}
)  # fmt: skip


def _changes_an_amount(verb: Token) -> bool:
    if verb.lemma_ == "be":  # "it's more like five", not "I'm 34" (``_an_age``)
        subject = next((c for c in verb.children if c.dep_ == "nsubj"), None)
        return subject is not None and subject.lower_ in ("it", "that", "this")
    return verb.lemma_.lower() in AMOUNT_CHANGE


def _an_age(number: Token) -> bool:
    """ "I'm 34", "she's 7": a person's age; not "it's more like five" (the count again)."""
    if number.head.lemma_ != "be":
        return False
    subject = next((c for c in number.head.children if c.dep_ == "nsubj"), None)
    return subject is None or subject.lower_ not in ("it", "that", "this")


def _same_unit(value: str, unit: str, memories: list[tuple[int, str]]) -> Rewrite | None:
    for memory_id, content in reversed(memories):
        found = re.search(rf"\b(?P<n>{_NUMBER})\s+{re.escape(unit)}\w*\b", content, re.I)
        if found is not None and found.group("n").lower() != value.lower():
            return _rewrite((memory_id, content), value)
    return None


def _rewrite(memory: tuple[int, str], value: str) -> Rewrite | None:
    memory_id, content = memory
    old = _A_NUMBER.search(content)
    if old is None or old.group(0).lower() == value.lower():
        return None
    return Rewrite(memory_id, content[: old.start()] + value + content[old.end() :])


def _word(text: str) -> str:
    words = _STOP.split(text.strip())[0].split()
    # "twelve years" -> "twelve years"; "Wednesday. same time" was cut at the full stop.
    return " ".join(words[:3]).strip(" .,")


# Where the new value ends: "John with an h", "Wednesday and", "12 years not 20".
_STOP = re.compile(r"\s+(?:with|without|and|but|not|instead|please|thanks)\b", re.I)


@dataclass(frozen=True)
class Rewrite:
    memory_id: int
    content: str


def corrected(memories: list[tuple[int, str]], correction: Correction) -> list[Rewrite]:
    """The newest memory the correction rewrites, with the old value replaced."""
    for memory_id, content in reversed(memories):
        old = correction.old or _same_kind(content, correction)
        if old and old.lower() in content.lower() and old.lower() != correction.new.lower():
            pattern = re.compile(rf"\b{re.escape(old)}\b", re.I)
            new = _without_what_follows(correction.new, content, old)
            new = _cased(new) if old[:1].isupper() else new
            return [Rewrite(memory_id, pattern.sub(new, content, count=1))]
    return []


def _without_what_follows(new: str, content: str, old: str) -> str:
    """ "three cats" for "two" in "has two cats" -> "three": the noun is there already."""
    after = content.lower().split(old.lower(), 1)[1].split()
    words = new.split()
    while len(words) > 1 and after and words[-1].lower().strip(".,") == after[0].strip(".,"):
        words, after = words[:-1], after[1:]
    return " ".join(words)


_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"


def _same_kind(content: str, correction: Correction) -> str:
    """The value in ``content`` of the new value's kind: a number for a number, a day for a
    day, a name like it for a spelling."""
    new = correction.new.lower()
    first = new.split()[0]
    if first.isdigit() or first in NUMBER_WORDS:
        found = re.search(rf"\b(?:{_NUMBER})\b", content, re.I)
        return found.group(0) if found else ""
    if re.fullmatch(_ORDINAL, first):  # "fourth floor" for "third floor"
        found = re.search(rf"\b(?:{_ORDINAL})\b", content, re.I)
        return found.group(0) if found else ""
    if first in _DAYS.split("|"):
        found = re.search(rf"\b(?:{_DAYS})\b", content, re.I)
        return found.group(0) if found else ""
    names = re.findall(r"\b[A-Z][a-z]+\b", content)
    close = [n for n in names if n.lower() != new and _alike(n.lower(), new)]
    return close[-1] if close else ""


def _alike(a: str, b: str) -> bool:
    """Two spellings of one name: the same first or last letters and few edits apart."""
    from difflib import SequenceMatcher

    return SequenceMatcher(None, a, b).ratio() >= 0.6


def _cased(new: str) -> str:
    return new[:1].upper() + new[1:] if new[:1].isalpha() else new


def says_a_number(text: str) -> bool:
    """Whether a message may change a count (one number, few words): only then are the
    recent memories read."""
    return len(text.split()) <= MAX_COUNT_WORDS and len(_A_NUMBER.findall(text)) == 1


# A game or a role-play set up in an earlier turn ("let's do a mock interview. pretend I'm a
# marine biologist, you ask the questions"): what the user says in it is the role's.
FRAME_VERBS = frozenset({"pretend", "imagine", "suppose"})
_FRAME_WORDS = re.compile(rf"\b(?:{'|'.join(sorted(FRAME_VERBS))})\b", re.I)
_FRAME_ENDS = re.compile(r"\b(?:stop|end|enough|back to|real life|for real|game over)\b", re.I)


def outside_the_role(turns: list[tuple[str, str]], text: str) -> str:
    """What of ``text`` the user says for themselves: "" inside a role-play they set up in
    the turns before (or in it), what follows its end when ``text`` ends one ("ok stop the
    game. for real: I play the cello." -> "for real: I play the cello."), else all of it."""
    framed = False
    for role, said in turns:
        if role == "user" and _sets_a_frame(said):
            framed = True
        elif role == "user" and framed and _FRAME_ENDS.search(said):
            framed = False
    if _sets_a_frame(text):
        return ""
    found = _FRAME_ENDS.search(text) if framed else None
    if not framed or found is None:
        return "" if framed else text
    end = _SENTENCE_END.search(text, found.end())
    return text[end.end() :] if end is not None else ""


_SENTENCE_END = re.compile(r"[.!?]+\s*")


def _sets_a_frame(text: str) -> bool:
    """ "pretend I'm a chef", "let's imagine I'm 80": an imperative of pretending whose
    clause is about the user; not "imagine you're my travel agent" (the assistant's role:
    the user still speaks for themselves) nor "my kids pretend to be cats"."""
    if not _FRAME_WORDS.search(text):
        return False
    from spaceduck.core.parse import parse

    for token in parse(text):
        if token.lemma_.lower() not in FRAME_VERBS or token.pos_ != "VERB":
            continue
        subject = [c for c in token.children if c.dep_ == "nsubj"]
        if subject and subject[0].lower_ not in ("'s", "us", "we"):
            continue  # someone pretends: "my kids pretend to be cats"
        clause = next((c for c in token.children if c.dep_ == "ccomp"), None)
        inner = [c for c in clause.children if c.dep_ == "nsubj"] if clause is not None else []
        if inner and inner[0].lower_ in ("i", "we"):
            return True
    return False
