"""The regex stage's introductions: "I'm Raj (he/him), 29, backend developer at Razorpay,
Bangalore", a self-description cut into pieces, each piece read as a slot."""

from __future__ import annotations

import re

from memories.extraction import regex_patterns as P
from memories.extraction import regex_words as W
from memories.extraction.guard import starts_like_question
from memories.extraction.sentences import is_known_word, lexical
from memories.extraction.slots import (
    Hit,
    parse_employer,
    parse_location,
    plain_name,
    prepare,
    role_parser,
)
from memories.extraction.types import CONFIDENCE

# --- Introductions -------------------------------------------------------------------------------
# "I'm Raj (he/him), 29, backend developer at Razorpay, Bangalore", "About me: 31, data engineer
# at Spotify, living in Gothenburg": an introduction lists who the user is in pieces, most of
# them without a verb. Once a message is an introduction, each piece is read on its own: a lone
# number is the age, a phrase headed by an occupation the role (and "at X" the employer), "in /
# from / based in X" or a lone place name the location.
_INTRO_MARK = re.compile(
    r"^\W*(?:about me|quick intro|intro|me(?:,?\s+in\s+(?:short|brief|a nutshell|numbers))?"
    r"|profile|bio|background|info for you|contact|tl;?dr(?: of my situation)?)\b"
    r"\s*(?:[:\-\u2013\u2014]|\n)",
    re.I,
)
_PIECE_CUT = re.compile(
    r"[,;!?()\n\u2013\u2014]|\.(?:\s|$)|\s-\s|\s+and\s+(?=I\b|I'm\b)"
    r"|[\U0001F300-\U0001FAFF\u2600-\u27BF]+"  # an emoji ends a piece: "im jess btw 👋 24"
)
_PIECE_LEAD = re.compile(
    rf"^(?:(?:and|so|but|also|currently|now|still|{W.GREETINGS})\s+)*(?:{P.I_AM}\s+)?"
    r"(?:(?:currently|now|still)\s+)?",
    re.IGNORECASE,
)
_AGE_PIECE = re.compile(r"^(?:aged?\s+)?(?P<value>\d{1,2})(?:\s*(?:years old|yo|y/o))?$", re.I)
_ROLE_PIECE = re.compile(r"^(?P<det>an?\s+|the\s+)?", re.IGNORECASE)
_AT_PIECE = re.compile(r"(?:^|\s)(?:at|with)\s+(?=[A-Z])")
# "from X" is where the user comes from, not where they live ("I'm Ada from Paris").
_IN_PIECE = re.compile(r"(?:^|\s)(?:in|based in|living in|live in|near)\s+", re.IGNORECASE)
_PLACE_PIECE = re.compile(r"^(?=[A-Z][\w\u00c0-\u024f]+(?:\s+[A-Z][\w\u00c0-\u024f]+){0,2}$)")


def intro_hits(text: str, named: bool) -> list[Hit]:
    """Slots read piece by piece when ``text`` is an introduction (see above), else []."""
    return _introduction(text, named)[0]


def introduction_rest(text: str, *, named: bool) -> list[str]:
    """The pieces of an introduction that hold no slot ("two teenage daughters", "mad about
    rugby"): facts about the user the clause reader words as sentences. [] when ``text`` is no
    introduction. ``named``: a name was already found in the message (by ``extract``)."""
    return _introduction(text, named)[1]


_NOT_A_DESCRIPTION = frozenset(
    [
        "please",
        "thanks",
        "thank",
        "excuse",
        "sorry",
        "good",
        "nice",
        "hello",
        "hi",
        "hey",
        "some",
        "so",
        "is",
        "are",
        "am",
        "was",
        "were",
        "calls",
        "call",
        "says",
        "said",
        "i",
        "can't",
        "cant",
        "cannot",
        "can",
        "don't",
        "dont",
        "won't",
        "not",
        "never",
        "will",
        "would",
        "could",
        "should",
        "might",
        "may",
        "must",
    ]
)


def _describes_user(piece: str) -> bool:
    """ "two teenage daughters", "mad about rugby", "Arsenal fan": a verbless piece about the
    user, not a pleasantry ("Good afternoon", "Please treat me well") or a clause of its own."""
    words = [w.lower() for w in re.findall(r"[\w'-]+", piece)]
    if not 2 <= len(words) <= 6 or set(words) & _NOT_A_DESCRIPTION:
        return False
    return not any(lexical(w).vbz or lexical(w).vbd for w in words[1:])


def _a_sentence(piece: str) -> bool:
    """A piece with a subject and its verb (not "backend dev at Zalando", a description)."""
    from spaceduck.core.parse import parse

    return any(t.dep_ == "nsubj" and t.head.pos_ in ("VERB", "AUX") for t in parse(piece))


def _introduction(text: str, named: bool) -> tuple[list[Hit], list[str]]:
    body = _INTRO_MARK.sub("", text, count=1)
    raw = [
        _TRAILING_PARTICLE.sub("", LIST_MARK.sub("", p)).strip(" .:")
        for p in _PIECE_CUT.split(prepare(body))
    ]
    raw = [p for p in raw if p and not _GREETING_ONLY.match(p)]
    if raw and (_I_AM_NAME.match(raw[0]) or re.match(r"^name\s*:", raw[0], re.IGNORECASE)):
        named = True  # "I'm Raj, 29, ...", "Name: Karin Olsen. Job: ..."
    opens_with_role = bool(raw) and any(
        hit.slot == "role" for hit in _piece_hits(_PIECE_LEAD.sub("", raw[0]), [], named=True)
    )
    if opens_with_role and len(raw) == 1 and _a_sentence(raw[0]):
        opens_with_role = False  # "doctor has me on a low-fibre diet": someone else's doing
    if not (named or _INTRO_MARK.match(text) or opens_with_role):
        return [], []
    hits: list[Hit] = []
    rest: list[str] = []
    for piece in raw:
        if starts_like_question(piece) or piece.lower().endswith(" here"):
            continue  # questions; "Dev here" is a name, read by the sentence stage
        name = _I_AM_NAME.match(piece)
        if name and not any(h.slot == "name" for h in hits):
            hits += plain_name(piece, name)
            continue
        piece = _PIECE_LEAD.sub("", piece)
        found = _piece_hits(piece, hits, named=named) if piece else []
        hits += found
        if piece and not found and _describes_user(piece):
            rest.append(piece)
    return hits, rest


# "I'm Raj", "im chloe": a name alone in the first piece of an introduction.
_I_AM_NAME = re.compile(
    rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+|hiya)[\s,!.:-]+)*(?:I'm|I\s+am|im)\s+"
    r"(?P<value>[A-Z][\w\u00c0-\u024f]+|[a-z]+)$",
    re.IGNORECASE,
)
_TRAILING_PARTICLE = re.compile(
    r"(?:\s+(?:btw|rn|lol|lmao|tbh|ngl|fyi|haha|now|these days|though|tho))+\s*$", re.IGNORECASE
)
LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+")  # also used by clauses.py
_GREETING_ONLY = re.compile(rf"^(?:{W.GREETINGS}|he+y+a*|hi+|hiya)$", re.IGNORECASE)
_FINITE = frozenset(["is", "are", "was", "were", "has", "have", "had"])
# Verbs that can open a piece and still say where the user is ("living in Leeds").
_WHERE_VERBS = frozenset(
    [
        "live",
        "living",
        "lives",
        "based",
        "located",
        "stay",
        "staying",
        "work",
        "working",
        "works",
        "study",
        "studying",
    ]
)


_AGE_BEFORE_ROLE = re.compile(r"^(?:an?\s+)?(?P<value>\d{1,2})[-\s]years?[-\s]old\s+", re.I)
_WORKING_AS = re.compile(
    r"^(?:working|work|works)\s+(?:[\w-]+\s+){0,2}?as\s+|^(?:working|work)\s+(?=(?:at|for)\s)", re.I
)


_PRONOUN_PIECE = re.compile(rf"^(?P<value>{P.PRONOUNS})$", re.IGNORECASE)
_LABEL_PIECE = re.compile(r"^(?P<label>[A-Za-z][\w ]{0,20}?)\s*:\s*(?=\S)")
_LABEL_SLOTS: dict[str, str] = {
    "name": "name",
    "age": "age",
    "location": "location",
    "city": "location",
    "home": "location",
    "based": "location",
    "based in": "location",
    "lives in": "location",
    "living in": "location",
    "job": "role",
    "role": "role",
    "work": "role",
    "occupation": "role",
}


def _labelled_piece(piece: str, label: str) -> list[Hit]:
    """ "Name: Sofía Herrera", "Job: senior PM at Klarna"; other labels fill no slot."""
    slot = _LABEL_SLOTS.get(label.lower().strip())
    value = _LABEL_PIECE.sub("", piece, count=1)
    anchor = re.match(r"", value)
    if slot is None or anchor is None:
        return []
    if slot == "name":
        return plain_name(value, re.match(r"(?P<value>.+)", value))  # type: ignore[arg-type]
    if slot == "age":
        return _piece_hits(value, [], named=True) if _AGE_PIECE.match(value) else []
    if slot == "location":
        return parse_location(value, anchor)
    return role_parser(strict=False)(value, _ROLE_PIECE.match(value))  # type: ignore[arg-type]


def _piece_hits(piece: str, earlier: list[Hit], *, named: bool) -> list[Hit]:
    labelled = _LABEL_PIECE.match(piece)
    if labelled:
        return _labelled_piece(piece, labelled.group("label"))
    pronouns = _PRONOUN_PIECE.match(piece)
    if pronouns:
        value = pronouns.group("value")
        return [
            Hit(
                "pronouns", f"The user's pronouns are {value}.", 0, len(piece), CONFIDENCE["stated"]
            )
        ]
    age = _AGE_PIECE.match(piece) or _AGE_BEFORE_ROLE.match(piece)
    if age:
        value = age.group("value")
        found = [Hit("age", f"The user is {value} years old.", 0, age.end(), CONFIDENCE["stated"])]
        rest = piece[age.end() :]  # "a 34-year-old software dev from Kyiv": the role follows
        return found + (_piece_hits(f"a {rest}", earlier, named=named) if rest else [])
    piece = _WORKING_AS.sub("", piece)
    hits = role_parser(strict=True)(piece, _ROLE_PIECE.match(piece))  # type: ignore[arg-type]
    if not any(h.slot == "employer" for h in hits):
        at = _AT_PIECE.search(piece)
        studies = any(word in W.STUDY_ROLES for word in piece.lower().split())
        short = at is not None and len(piece[: at.start()].split()) <= 2
        if at and (hits or at.start() == 0 or short) and not studies:
            hits += parse_employer(piece, at)
    words = piece.lower().split()
    first = words[0]
    opening = lexical(first)
    activity = first not in _WHERE_VERBS and opening.verb and (opening.gerund or not opening.noun)
    stated = any(w in _FINITE for w in words[1:])
    if activity or stated:
        return hits  # "writing a story set in Paris", "My novel is set in Rome": not a home
    for located in _IN_PIECE.finditer(piece):
        found = parse_location(piece, located)
        if found:
            return hits + found
    bare = _PLACE_PIECE.match(piece)
    if bare and not hits and not is_known_word(first):
        # A lone name: the user's before anything else is said, a place after.
        if any(h.slot in ("age", "role", "employer") for h in earlier):
            return parse_location(piece, bare)
        if not named and not earlier:
            return plain_name(piece, re.match(r"(?P<value>.+)", piece))  # type: ignore[arg-type]
    return hits
