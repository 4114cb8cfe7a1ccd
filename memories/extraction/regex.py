"""The regex stage: identity facts and explicit "remember that ..." requests in USER messages.

Deterministic and cheap (it runs on every message), so it is conservative: a miss is repaired by
the LLM stage, a wrong identity fact supersedes a right one. It only fires on first-person
statements in a plain declarative clause.

What it extracts (``extract``):

- Slots (``types.SLOTS``), as canonical third-person sentences:
  name ("my name is Ada" — certain; "call me Ada", "I'm Ada" at sentence start — stated),
  age ("I'm 34", "I am 34 years old", "I just turned 40"), location ("I live in / I moved to /
  I'm based in / I relocated to X"), employer ("I work at/for X", "I just joined X", "I'm an
  engineer at X"), role ("I work as a nurse", "I'm a software engineer" only when the head noun is
  a known occupation), email, phone, pronouns, birthday.
- "remember (that) ...", "please remember ...", "don't forget (that) ...": the clause as a fact in
  the third person; "remember to always/never ..." as a procedure (never/not -> constraint,
  always -> behavioral). Slots inside the clause are extracted as slots instead.

What it refuses: questions (a "?" closing the clause, or a question opening the sentence),
negated or hedged clauses ("I don't live in", "I no longer work at", "if I lived", "he thinks
I live"), other people ("my sister lives in Rome"), past or future states ("I used to live",
"I'm moving to"), quoted text (code blocks, "> " lines, double-quoted spans of 3+ words) and
injected memory blocks.

Values stop at punctuation, conjunctions, prepositions and time words ("I moved to Tokyo last
month" -> Tokyo). Proper-noun values must be capitalised, unless the whole sentence is typed in
lower case (then a small block list guards against "i live in peace", and a place is
title-cased). One candidate per slot per message (the most confident, then the first).

Known limits: English only; digits only for ages; "Trinidad and Tobago" stops at "and";
nationalities and other capitalised adjectives after "I'm" are excluded by a list, not grammar.
The word lists live in ``regex_words.py``; this module holds the patterns and the logic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import islice

from memories.extraction import regex_words as W
from memories.extraction.gate import IRREGULAR_PAST
from memories.extraction.guard import starts_like_question, strip_recalled
from memories.extraction.reported import strip_reported
from memories.extraction.sentences import is_known_word, is_sentence, lexical
from memories.extraction.types import CONFIDENCE, IMPORTANCE, Candidate

SLOT_TITLES = {
    "name": "Name",
    "age": "Age",
    "location": "Location",
    "employer": "Employer",
    "role": "Role",
    "email": "Email",
    "phone": "Phone",
    "pronouns": "Pronouns",
    "birthday": "Birthday",
}
_CORE_SLOTS = frozenset({"name", "location", "employer", "role"})

# --- Clause checks ----------------------------------------------------------------------------

# Before the trigger in the same clause, these make the statement hypothetical, negated,
# or someone else's belief.
_HEDGE = re.compile(rf"\b(?:{W.HEDGES})\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(
    r"[,;:()\u2014\u2013]|\s-\s|\b(?:and|but|so|because|since)\b", re.IGNORECASE
)
_OPENER = re.compile(rf"^(?:(?:{W.OPENERS})[\s,!.:-]*)*$", re.IGNORECASE)

# --- Text preparation --------------------------------------------------------------------------

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_QUOTED = re.compile(r"\"([^\"\n]*)\"")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u3000]+")
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n+")
_LAST_WORD = re.compile(r"(\S+)$")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]?")


@lru_cache(maxsize=256)
def _prepare(text: str) -> str:
    text = strip_reported(strip_recalled(text))
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    text = _FENCED.sub("\n", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _QUOTED_LINE.sub("", text)
    # Three or more quoted words are someone else's speech; a quoted name is still the user's.
    text = _QUOTED.sub(lambda m: " " if len(m.group(1).split()) >= 3 else m.group(1), text)
    text = text.replace('"', "")
    return _SPACES.sub(" ", text)


def _sentences(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        mark = match.group()
        if mark == "." or (mark.startswith(".") and not mark.startswith("..")):
            last = _LAST_WORD.search(text, start, match.start())
            word = last.group(1) if last else ""
            if word.lower() in W.ABBREVIATIONS or _INITIALS.fullmatch(word):
                continue
        end = match.start() if mark.startswith("\n") else match.end()
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


# --- Value phrases -----------------------------------------------------------------------------

_TOKEN = re.compile(r"\S+")
_TRAILING = re.compile(r"[.,;:!?)\]\"'}]+$")
_BOUNDARY_CHARS = frozenset(",;:!?.)]")


@dataclass
class _Phrase:
    words: list[str]
    end: int  # index in the sentence just after the last word taken
    stopper: str  # "end", "punct:<c>", "stop:<word>", "other", "max"
    next_start: int  # where the token that stopped the phrase starts (or end)

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _split_token(raw: str) -> tuple[str, str]:
    match = _TRAILING.search(raw)
    if not match:
        return raw, ""
    core, trail = raw[: match.start()], match.group()
    if trail.startswith(".") and (core.lower() in W.ABBREVIATIONS or _INITIALS.fullmatch(core)):
        core, trail = core + ".", trail[1:]
    return core, trail


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() and word != "I" and not word.lower().startswith("i'")


def _is_wordlike(word: str, *, digits: bool) -> bool:
    bare = word.replace("-", "").replace("'", "").replace(".", "").replace("&", "")
    return bool(bare) and (bare.isalnum() if digits else bare.isalpha())


def _phrase(
    sentence: str,
    pos: int,
    *,
    max_words: int,
    allow_lower: bool,
    connectors: frozenset[str],
    name_like: bool = False,
) -> _Phrase:
    """Take a proper-noun phrase ("New York", "the BBC", "Isle of Man") starting at ``pos``.

    A phrase longer than ``max_words`` comes back cut, with stopper "max".
    """
    tokens = list(islice(_TOKEN.finditer(sentence, pos), max_words + 2))
    words: list[str] = []
    end = pos
    for index, token in enumerate(tokens):
        core, trail = _split_token(token.group())
        lower = core.lower()
        following = _split_token(tokens[index + 1].group())[0] if index + 1 < len(tokens) else ""
        following_ok = (
            _is_capitalised(following)
            and following.lower() not in W.STOP
            and _is_wordlike(following, digits=not name_like)
        )
        if len(words) == max_words:
            if lower in W.STOP:
                stopper = f"stop:{lower}"
            elif (lower in connectors and following_ok) or _is_capitalised(core):
                stopper = "max"
            else:
                stopper = "other"
            return _Phrase(words, end, stopper, token.start())
        if words and lower in connectors and following_ok and not trail:
            pass
        elif (
            not core
            or not _is_wordlike(core, digits=not name_like and bool(words))
            or (name_like and lower.endswith("'s"))
        ):
            return _Phrase(words, end, "other", token.start())
        elif not words and lower == "the" and following_ok and not name_like:
            pass
        elif lower in W.STOP:
            return _Phrase(words, end, f"stop:{lower}", token.start())
        elif not words and lower in W.DETERMINERS:
            return _Phrase(words, end, "other", token.start())
        elif _is_capitalised(core) or (allow_lower and core.islower()):
            pass
        else:
            return _Phrase(words, end, "other", token.start())
        words.append(core)
        end = token.start() + len(core)
        if trail and trail[0] in _BOUNDARY_CHARS:
            return _Phrase(words, end, f"punct:{trail[0]}", token.end())
    return _Phrase(words, end, "end", len(sentence))


def _role_phrase(sentence: str, pos: int) -> _Phrase:
    """Take an occupation noun phrase ("senior data scientist") starting at ``pos``."""
    tokens = list(islice(_TOKEN.finditer(sentence, pos), 7))
    words: list[str] = []
    end = pos
    for index, token in enumerate(tokens):
        core, trail = _split_token(token.group())
        lower = core.lower()
        if not core or not _is_wordlike(core, digits=False):
            return _Phrase(words, end, "other", token.start())
        if lower in W.STOP or lower in W.DETERMINERS or core == "I":
            return _Phrase(words, end, f"stop:{lower}", token.start())
        words.append(core)
        end = token.start() + len(core)
        if trail and trail[0] in _BOUNDARY_CHARS:
            return _Phrase(words, end, f"punct:{trail[0]}", token.end())
        if len(words) >= 5:
            nxt = tokens[index + 1].start() if index + 1 < len(tokens) else token.end()
            return _Phrase(words, end, "max", nxt)
    return _Phrase(words, end, "end", len(sentence))


# --- Hits --------------------------------------------------------------------------------------


@dataclass
class _Hit:
    slot: str
    content: str
    start: int  # trigger start, in the sentence (or clause) it was found in
    end: int  # value end
    confidence: float
    order: int = 0


def _sentence_end(value: str) -> str:
    return value if value.endswith((".", "!", "?")) else value + "."


def _title_name(value: str) -> str:
    if not value.islower():
        return value
    return " ".join(
        "-".join(part.capitalize() for part in word.split("-")) for word in value.split()
    )


_PRONOUN_I = re.compile(r"\bI(?:'[a-z]+)?\b")


# Cached: every name/employer match of a sentence asks, and a run-on sentence of a
# long message has thousands of them (quadratic: 64 KiB took ~8 s here alone).
@lru_cache(maxsize=16)
def _all_lower(sentence: str) -> bool:
    """Typed in lower case (ignoring the pronoun "I" and an auto-capitalised first letter)."""
    return not any(char.isupper() for char in _PRONOUN_I.sub("", sentence[1:]))


Parser = Callable[[str, re.Match[str]], list[_Hit]]


def _name_parser(*, explicit: bool) -> Parser:
    def parse(sentence: str, match: re.Match[str]) -> list[_Hit]:
        phrase = _phrase(
            sentence,
            match.end(),
            max_words=2 if not explicit else 4,
            allow_lower=explicit,
            connectors=W.NAME_CONNECTORS,
            name_like=True,
        )
        if not phrase.words or phrase.stopper in ("other", "max"):
            return []
        if any(word.lower() in W.NOT_NAMES for word in phrase.words):
            return []
        if any(len(word) > 2 and word.isupper() for word in phrase.words):
            return []  # "I'm ADHD", "I'm OK": acronyms, not names
        if phrase.words[0].lower().endswith("ese") or any(
            word.lower() in W.ROLE_HEADS | W.ROLE_ACRONYMS for word in phrase.words
        ):
            return []
        if phrase.text.islower() and len(phrase.words) > 2:
            return []
        confidence = CONFIDENCE["certain"] if explicit else CONFIDENCE["stated"]
        name = _title_name(phrase.text)
        content = f"The user's name is {_sentence_end(name)}"
        return [_Hit("name", content, match.start(), phrase.end, confidence)]

    return parse


def _title_place(value: str) -> str:
    """Title-case a place typed in lower case: "new york" -> "New York", "the bay area" ->
    "the Bay Area" (connectors such as "de" and "am" stay as they are)."""
    words = value.split()
    return " ".join(
        word
        if (index == 0 and word == "the") or (index and word in W.PLACE_CONNECTORS)
        else "-".join(part.capitalize() for part in word.split("-"))
        for index, word in enumerate(words)
    )


def _parse_location(sentence: str, match: re.Match[str]) -> list[_Hit]:
    phrase = _phrase(
        sentence,
        match.end(),
        max_words=5,
        allow_lower=_all_lower(sentence),
        connectors=W.PLACE_CONNECTORS,
    )
    if not phrase.words or phrase.text.lower() in W.LOCATION_BLOCK:
        return []
    value, end = phrase.text, phrase.end
    if phrase.stopper == "punct:,":
        # "Paris, France" — but not "Paris, Ada lives in Rome".
        region = _phrase(
            sentence, phrase.next_start, max_words=3, allow_lower=False, connectors=frozenset()
        )
        if region.words and region.stopper not in ("other", "max"):
            value, end = f"{value}, {region.text}", region.end
    if value.islower():
        value = _title_place(value)
    content = f"The user lives in {_sentence_end(value)}"
    return [_Hit("location", content, match.start(), end, CONFIDENCE["stated"])]


_NOT_A_HOME = re.compile(rf"\b(?:{W.NOT_A_HOME})\b", re.IGNORECASE)


def _household_move(sentence: str, match: re.Match[str]) -> list[_Hit]:
    if _NOT_A_HOME.search(sentence):
        return []
    return _parse_location(sentence, match)


def _employer_hit(sentence: str, pos: int, start: int) -> _Hit | None:
    phrase = _phrase(
        sentence,
        pos,
        max_words=6,
        allow_lower=_all_lower(sentence),
        connectors=W.EMPLOYER_CONNECTORS,
    )
    if not phrase.words or phrase.text.lower() in W.EMPLOYER_BLOCK:
        return None
    content = f"The user works at {_sentence_end(phrase.text)}"
    return _Hit("employer", content, start, phrase.end, CONFIDENCE["stated"])


def _parse_employer(sentence: str, match: re.Match[str]) -> list[_Hit]:
    hit = _employer_hit(sentence, match.end(), match.start())
    return [hit] if hit else []


def _role_content(det: str, role: str) -> str:
    head = role.split()[-1].lower()
    if head in W.STUDY_ROLES:
        article = det or ("an " if role[:1].lower() in "aeiou" else "a ")
        return f"The user is {article}{_sentence_end(role)}"
    return f"The user works as {det}{_sentence_end(role)}"


def _role_parser(*, strict: bool) -> Parser:
    """``strict``: the head noun must be a known occupation ("I'm a nurse", not "I'm a fan")."""

    def parse(sentence: str, match: re.Match[str]) -> list[_Hit]:
        det = (match.groupdict().get("det") or "").strip().lower()
        phrase = _role_phrase(sentence, match.end())
        if not phrase.words or phrase.stopper in ("other", "max"):
            return []
        lowered = [word.lower() for word in phrase.words]
        head = lowered[-1]
        if any(word in W.NOT_CURRENT or word.startswith("ex-") for word in lowered):
            return []
        known = (
            head in W.ROLE_HEADS
            or head in W.ROLE_ACRONYMS
            or bool(_ROLE_SUFFIX.search(head))  # cardiologist, paediatrician, radiographer
            or lowered[:2] == ["head", "of"]  # "head of data"
        )
        if (strict or not det) and not known:
            return []
        if head in W.WORK_AS_BLOCK:
            return []
        article = f"{det} " if det else ""
        hits = [
            _Hit(
                "role",
                _role_content(article, phrase.text),
                match.start(),
                phrase.end,
                CONFIDENCE["stated"],
            )
        ]
        # "I'm an engineer at Google": the employer comes along.
        if phrase.stopper in ("stop:at", "stop:for") and head not in W.STUDY_ROLES:
            after = _TOKEN.match(sentence, phrase.next_start)
            if after:
                employer = _employer_hit(sentence, after.end(), match.start())
                if employer:
                    hits.append(employer)
        return hits

    return parse


def _age_either(sentence: str, match: re.Match[str]) -> list[_Hit]:
    """The age from whichever group matched ("a 34-year-old", "aged 34")."""
    value = match.group("value") or match.group("value2")
    if not value or not _valid_age(value):
        return []
    return [
        _Hit(
            "age",
            f"The user is {value} years old.",
            match.start(),
            match.end(),
            CONFIDENCE["stated"],
        )
    ]


def _value_parser(
    slot: str, template: str, *, check: Callable[[str], bool] | None = None
) -> Parser:
    def parse(sentence: str, match: re.Match[str]) -> list[_Hit]:
        value = match.group("value").strip().rstrip(".")
        if check is not None and not check(value):
            return []
        content = template.format(value=value)
        return [_Hit(slot, content, match.start(), match.end("value"), CONFIDENCE["stated"])]

    return parse


def _valid_age(value: str) -> bool:
    return 1 <= int(value) <= 120


def _valid_phone(value: str) -> bool:
    return 7 <= sum(char.isdigit() for char in value) <= 15


# --- Triggers ----------------------------------------------------------------------------------

_ADV = rf"(?:(?:{W.TRIGGER_ADVERBS})\s+)*"
_I_AM = r"\bI(?:'m|m|\s+am)"
_AGE_END = rf"(?=\s*(?:$|[,.;:!?)\u2013\u2014-]|(?:{W.AGE_END_WORDS})\b))"
_AGE_UNIT = r"(?:\s*(?:years?|yrs?)(?:\s+old|\s+of\s+age)?|\s*y/?o\b|\s*y\.o\.)?"
# Not inside a URL's credentials ("mongodb://ana:hunter2@db.local" holds a password, no email).
_EMAIL = r"(?<![\w.:/%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
_PHONE = r"\+?\(?\d[\d\s().-]{5,22}\d"
_PRONOUN = rf"(?:{W.PRONOUNS})\b"
_PRONOUNS = rf"{_PRONOUN}(?:\s*/\s*{_PRONOUN}){{1,3}}"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:{_MONTH}\s+(?:the\s+)?{_DAY}(?:,?\s+\d{{4}})?|(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}"
    rf"(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[/.]\d{{1,2}}(?:[/.]\d{{2,4}})?)\b"
)

_FLAGS = re.IGNORECASE


# (needles, pattern, parser): a pattern only runs on sentences (lower-cased) containing one
# of its needles, which skips most of the regex work on ordinary chat.
def _less_sure(parser: Parser) -> Parser:
    """``parser`` at "likely": a reading a plainer statement in the same message overrides."""

    def parse(sentence: str, match: re.Match[str]) -> list[_Hit]:
        return [replace(h, confidence=CONFIDENCE["likely"]) for h in parser(sentence, match)]

    return parse


def _plain_name(sentence: str, match: re.Match[str]) -> list[_Hit]:
    """The name in the ``value`` group as it stands ("Dev here", "im chloe"), title-cased."""
    raw = match.group("value")
    if raw.lower() in W.NOT_NAMES or (len(raw) > 2 and raw.isupper()):
        return []  # "I'm ADHD", "I'm OK"
    if raw.islower() and is_known_word(raw):
        return []  # "im tired"
    value = _title_name(raw)
    content = f"The user's name is {_sentence_end(value)}"
    return [_Hit("name", content, match.start(), match.end(), CONFIDENCE["stated"])]


# Any character of a clause that is not a negation ("I'm not based in Berlin").
_NOT_NEGATED = r"(?:(?!\bnot\b|\bnever\b|\bno\s+longer\b)[^,.;!?])"
_ROLE_SUFFIX = re.compile(r"(?:ologist|ician|iatrist|ographer|ometrist|apist)s?$")
# A known occupation as a regex alternation, longest first: "teacher from Valencia".
_ROLE_HEADS = "|".join(sorted((re.escape(w) for w in W.ROLE_HEADS), key=len, reverse=True))

_EXTRACTORS: tuple[tuple[tuple[str, ...], re.Pattern[str], Parser], ...] = tuple(
    (needles, re.compile(pattern, _FLAGS), parser)
    for needles, pattern, parser in (
        # name
        (
            ("name",),
            r"\bmy\s+(?:(?:full|first|real|given)\s+)?name(?:\s+is|'s)\s+",
            _name_parser(explicit=True),
        ),
        (
            ("call me",),
            r"\b(?:(?:you\s+(?:can|may|should)|please|just)\s+)?call\s+me\s+",
            _name_parser(explicit=False),
        ),
        (
            ("i'm", "im", "i am"),
            rf"^(?:(?:{W.GREETINGS})(?:\s+(?:{W.GREETING_ADDRESSEES}))?[\s,!.:-]*)*"
            r"I(?:'m|m|\s+am)\s+",
            _name_parser(explicit=False),
        ),
        # age
        (
            ("i'm", "im", "i am"),
            rf"{_I_AM}\s+(?:actually\s+|really\s+|now\s+)?(?P<value>\d{{1,3}}){_AGE_UNIT}{_AGE_END}",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        (
            ("turned",),
            rf"\bI\s+(?:just\s+|recently\s+)?turned\s+(?P<value>\d{{1,3}}){_AGE_UNIT}"
            rf"(?=\s*(?:$|[,.;:!?)]|(?:and|but|so|last|this|yesterday|today|on|in)\b))",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        (
            ("age",),
            r"\bmy\s+age\s+is\s+(?P<value>\d{1,3})\b",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        # location
        (("live", "reside"), rf"\bI\s+{_ADV}(?:live|reside)\s+in\s+", _parse_location),
        (
            ("living", "residing", "based", "located", "settled", "staying"),
            rf"{_I_AM}\s+{_ADV}(?:living|residing|based|located|settled|staying)\s+(?:in|out\s+of)\s+",
            _parse_location,
        ),
        (
            ("moved", "relocated"),
            rf"\bI(?:'ve|\s+have)?\s+{_ADV}(?:moved|relocated)\s+(?:back\s+|over\s+)?to\s+",
            _parse_location,
        ),
        # "Just settled into my new flat in Porto", "I moved into a new place in Oslo"
        (
            ("settled", "moved"),
            rf"(?:^|\bI(?:'ve|\s+have)?\s+){_ADV}(?:settled|moved)\s+(?:in|into)\s+"
            r"(?:(?:my|our|a|the)\s+(?:new\s+)?(?:flat|home|house|apartment|place)\s+in\s+)?"
            r"(?=[A-Z])",
            _parse_location,
        ),
        # "We just moved to Munich": the user's household moved, so the user lives there; not
        # "we moved to Postgres" (a sentence about tools or work is the team's).
        (
            ("moved", "relocated"),
            rf"(?:^|[,;]\s*|\b(?:and|so)\s+)[Ww]e(?:'ve|\s+have)?\s+{_ADV}(?:moved|relocated)\s+"
            r"(?:back\s+|over\s+)?to\s+(?=[A-Z])",
            _household_move,
        ),
        # employer
        (
            ("work",),
            rf"(?:\bI|\bI\s+\w+\s+in\s+\S+\s+and)\s+{_ADV}work\s+(?:at|for)\s+",
            _parse_employer,
        ),
        (
            ("working", "employed"),
            rf"{_I_AM}\s+{_ADV}(?:working|employed)\s+(?:at|for|by)\s+",
            _parse_employer,
        ),
        (
            ("joined", "started"),
            r"\bI(?:'ve|\s+have)?\s+(?:just|recently)\s+(?:joined|started\s+(?:working\s+)?at)\s+",
            _parse_employer,
        ),
        (
            ("started",),
            r"\bI\s+(?:just\s+|recently\s+)?started\s+(?:a\s+(?:new\s+)?job\s+|working\s+)?at\s+",
            _parse_employer,
        ),
        # role
        (
            (" as ",),
            rf"\bI\s+{_ADV}work\s+(?:(?:at|for)\s+(?:[^\s,.;:!?]+\s+){{1,5}}?)?as\s+"
            r"(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=False),
        ),
        (
            (" as ",),
            rf"{_I_AM}\s+{_ADV}working\s+(?:(?:at|for)\s+(?:[^\s,.;:!?]+\s+){{1,5}}?)?as\s+"
            r"(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=False),
        ),
        (("i'm", "im", "i am"), rf"{_I_AM}\s+{_ADV}(?P<det>an?|the)\s+", _role_parser(strict=True)),
        (
            ("my",),
            r"\bmy\s+(?:job\s+title|job|role|title|position|occupation|profession)\s+is\s+"
            r"(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=True),
        ),
        # --- the same slots as people type them in chat or in a second language ---------
        # "name's Dmitri", "Me I am called Oksana", "Tomás here, teacher from Valencia"
        (("name",), r"^(?:the\s+)?name(?:'s|\s+is)\s+", _name_parser(explicit=True)),
        (("called",), rf"(?:^|,\s*|\bme\s+){_I_AM}\s+called\s+", _name_parser(explicit=True)),
        (
            ("here",),
            rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*(?P<value>[A-Z][\w\u00c0-\u024f]+)"
            r"(?=\s+here\b\s*(?:[,.!:;\u2014-]|$))",  # "Dev here," but not "Postmortems here are"
            _plain_name,
        ),
        # "23 yo, uni student", "I have 45 years", "I am having 19 years"
        (
            ("years",),
            r"(?:^|\bI\s+(?:have|am\s+having|am\s+with)\s+)(?P<value>\d{1,3})\s+years(?:\s+old)?"
            r"(?!\s+(?:ago|of|in|at|with|experience|later|before))\b",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        # "I stay in Seoul", "I live at Munich", "but live in Madrid", "still in Melbourne",
        # "i'm in Lyon now", "moved to glasgow", "we moved to Edinburgh", "I work from Tbilisi"
        (
            ("stay", "live"),
            rf"(?:(?:\bI|\b(?:but|and)|^)\s+|,\s*|{_I_AM}\s+{_NOT_NEGATED}{{0,40}}?\s)"
            rf"{_ADV}(?:stay|staying|live|living)\s+(?:in|at|near)\s+",
            _parse_location,
        ),
        (
            ("in ",),
            rf"(?:^(?:(?:yep|yeah|yes|no|nah)[\s,]+)?{_ADV}|{_I_AM}\s+{_ADV}"
            r"|,\s*(?:now|currently|still)\s+)in\s+(?=[A-Z])",
            _parse_location,
        ),
        (
            ("moved",),
            rf"(?:^|\bI(?:'ve|\s+have)?\s+){_ADV}(?:moved|relocated)\s+from\s+[^,.;!?]{{1,40}}?\s+to\s+"
            rf"|^{_ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+",
            _parse_location,
        ),
        (
            ("from",),
            rf"\bI\s+{_ADV}work\s+{_ADV}from\s+(?=[A-Z])",
            _parse_location,
        ),
        (
            ("location", "city"),
            r"(?:^|\n|\.\s+)\W*(?:location|city|based|home)\s*:\s*",
            _parse_location,
        ),
        # "workin at Zalando", "just started at Monzo", "I joined Atlassian", "I'm at Babylon
        # Health", "I work in the Samsung", "I started a new role at Skyscanner"
        (
            ("working", "workin", "started", "joined"),
            r"^(?:just\s+|recently\s+|now\s+)?(?:working|workin'?|started|joined)\s+(?:at|for)\s+",
            _parse_employer,
        ),
        (
            ("joined",),
            rf"\bI(?:'ve|\s+have)?\s+{_ADV}joined\s+(?=[A-Z])",
            _parse_employer,
        ),
        # "I got a job at Stripe", "I've landed a new role with Atlassian"
        (
            ("job", "role", "position"),
            rf"\bI(?:'ve|\s+have)?\s+{_ADV}(?:got|landed)\s+(?:a\s+)?(?:new\s+)?"
            r"(?:job|role|position)\s+(?:at|with)\s+(?=[A-Z])",
            _parse_employer,
        ),
        # "I left Google and joined Stripe", "I quit Oracle to join SAP": the new employer.
        (
            ("join",),
            rf"\bI(?:'ve|\s+have)?\s+{_ADV}(?:left|quit)\s+[A-Z][^,.;!?]{{0,40}}?\s+"
            r"(?:and|to)\s+(?:then\s+|now\s+)?(?:joined|join)\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("at ",),
            rf"{_I_AM}\s+{_ADV}at\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("work",),
            rf"\bI\s+{_ADV}(?:work|am\s+working)\s+(?:in\s+the|by(?:\s+the)?)\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("started",),
            rf"\bI\s+{_ADV}started\s+(?:a\s+)?(?:new\s+)?(?:role|job|position)\s+at\s+",
            _parse_employer,
        ),
        # "I work like engineer", "working by Bosch as software tester", "I make the job of
        # accountant", "got promoted to engineering manager", "joined Atlassian as a ..."
        (
            (" like ", " as ", "job of"),
            rf"(?:\bI(?:'ve|\s+have)?|\band)\s+{_ADV}(?:work|working|am\s+working|joined"
            r"|been\s+(?:at|with))\s+"
            r"(?:[^\s,.;:!?]+\s+){0,5}?"
            r"(?:as|like)\s+(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=True),
        ),
        (
            ("job of",),
            r"\bI\s+(?:make|do|have)\s+the\s+job\s+of\s+(?P<det>an?\s+)?",
            _role_parser(strict=True),
        ),
        (
            ("promoted",),
            r"(?:\bI(?:'ve|\s+have)?\s+|^)(?:just\s+|finally\s+)?(?:got|was|been)\s+promoted\s+to\s+"
            r"(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=True),
        ),
        (
            ("work", "job", "role"),
            r"(?:^|\n)\W*(?:work|job|role)\s*:\s*(?P<det>an?\s+|the\s+)?",
            _role_parser(strict=True),
        ),
        # "Lukas, 34, from Graz": an introduction as a list
        (
            (",",),
            rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*(?=[A-Z][\w\u00c0-\u024f]+,\s*\d{{1,2}}\b)",
            _name_parser(explicit=False),
        ),
        (
            (",",),
            rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*[A-Z][\w\u00c0-\u024f]+,\s*"
            r"(?P<value>\d{1,2}),",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        (
            ("from",),
            r"^(?:\w+[\s,!.]+)?[A-Z][\w\u00c0-\u024f]+,\s*\d{1,2},\s*from\s+",
            _parse_location,
        ),
        (
            ("turned",),
            r"^(?:just\s+|recently\s+)?turned\s+(?P<value>\d{1,3})\b",
            _value_parser("age", "The user is {value} years old.", check=_valid_age),
        ),
        (
            ("based",),
            rf"{_I_AM}\s+{_NOT_NEGATED}{{0,40}}?\bbased\s+(?:in|out\s+of)\s+",
            _parse_location,
        ),
        # "Myself Rohit", "doing job in Infosys", "I am accountant" (no article)
        (
            ("myself",),
            rf"^(?:(?:{W.GREETINGS})[\s,!.:-]+)*myself\s+(?P<value>[A-Z][\w\u00c0-\u024f]+)",
            _plain_name,
        ),
        (
            ("job",),
            r"\bdoing\s+(?:a\s+|the\s+)?job\s+(?:in|at|with|for)\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("i am", "i'm", "im"),
            rf"{_I_AM}\s+{_ADV}(?=(?:[\w-]+\s+)?(?:{_ROLE_HEADS})\b)(?!(?:a|an|the)\b)",
            _role_parser(strict=True),
        ),
        # more of the ways people say who they are
        (
            ("this is",),
            rf"^(?:(?:{W.GREETINGS}|he+y+a*|hi+)[\s,!.:-]+)*this\s+is\s+(?=[A-Z])",
            _name_parser(explicit=False),
        ),
        (
            ("go by", "call me", "calls me"),
            r"\b(?:I\s+go\s+by|(?:everyone|everybody|people|friends|most\s+people|they)\s+"
            r"(?:just\s+)?calls?\s+me)\s+",
            _name_parser(explicit=False),
        ),
        (
            ("year-old", "year old", "aged", "age"),
            r"(?:\b(?:I'm|I\s+am)\s+an?\s+(?P<value>\d{1,3})[-\s]years?[-\s]old\b"
            r"|^(?:aged?\s*:?\s*)(?P<value2>\d{1,3})\b)",
            _age_either,
        ),
        (
            ("-based",),
            rf"{_I_AM}\s+{_ADV}(?:an?\s+)?(?=[A-Z][\w\u00c0-\u024f]+-based\b)",
            _parse_location,
        ),
        (
            ("here in",),
            r"\bhere\s+in\s+(?=[A-Z])",
            _parse_location,
        ),
        (
            ("with", "been at"),
            rf"(?:{_I_AM}|\bI(?:'ve|\s+have)\s+been|^{_ADV}been)\s+{_ADV}(?:with|at)\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("employer", "company"),
            r"\bmy\s+(?:employer|company)\s+is\s+(?=[A-Z])",
            _parse_employer,
        ),
        (
            ("retired", "by trade", "for a living"),
            rf"{_I_AM}\s+(?:an?\s+)?(?:retired\s+)?(?=(?:[\w-]+\s+){{0,2}}?[\w-]+\s+by\s+trade)"
            r"|\b(?:I'm|I\s+am)\s+(?:an?\s+)?retired\s+(?P<det>)",
            _role_parser(strict=True),
        ),
        # an introduction without a verb: "Tomás here, teacher from Valencia", "uni student in
        # Kraków", "I'm a barista at a tiny cafe in Porto"
        (
            ("here", ","),
            r"(?:^|,\s*)(?:(?:uni|university|high\s+school|phd|grad)\s+)?(?=[a-z]+\s+(?:from|in)\s+[A-Z])",
            _role_parser(strict=True),
        ),
        (
            ("from", " in "),
            rf"(?:^|,\s*|{_I_AM}\s+(?:an?|the)\s+)(?:[\w-]+\s+){{0,3}}?(?:{_ROLE_HEADS})"
            r"\s+in\s+(?=[A-Z])",  # "from X" is where the user comes from ("I'm Ada from Paris")
            _less_sure(_parse_location),  # "developer in Allegro" may name the employer
        ),
        # email, phone, pronouns, birthday
        (
            ("@",),
            r"\b(?:my\s+(?:(?:work|personal|main|primary|private|business|school)\s+)?"
            r"e-?mail(?:\s+address)?(?:\s+is|'s)|e-?mail\s+me\s+(?:at|on)|"
            r"(?:you\s+can\s+)?(?:reach|contact)\s+me\s+(?:at|on|via))\s*:?\s*<?"
            rf"(?P<value>{_EMAIL})",
            _value_parser("email", "The user's email is {value}."),
        ),
        (
            ("me", "my"),
            r"\b(?:my\s+(?:(?:work|personal|home|mobile|cell|office)\s+)?"
            r"(?:phone|cell|mobile|telephone)(?:\s+number)?(?:\s+is|'s)|my\s+number\s+is|"
            r"(?:call|text|ring)\s+me\s+(?:at|on)|(?:you\s+can\s+)?reach\s+me\s+(?:at|on))"
            rf"\s*:?\s*(?P<value>{_PHONE})",
            _value_parser("phone", "The user's phone number is {value}.", check=_valid_phone),
        ),
        (
            ("@",),
            r"(?:\b(?:my|me)\b[^.;!?\n@]{0,40}?|\b(?:e-?mail|mail)\s*:\s*|\bcontact\s*:[^\n@]{0,40}?)"
            rf"(?P<value>{_EMAIL})",
            _value_parser("email", "The user's email is {value}."),
        ),
        # "Use ann@new.example from now on", "I've switched to a new address: raj@work.example"
        (
            ("@",),
            r"(?:\b(?:please\s+)?use\s+(?=\S+@\S+\s+(?:from\s+now\s+on|instead|going\s+forward|"
            r"for\s+(?:me|everything)))|\b(?:new|updated|current|different)\s+(?:e-?mail\s+)?"
            r"address\s*(?:is|:)?\s*|\bswitched\s+(?:my\s+e-?mail\s+)?to\s+(?=\S+@))<?"
            rf"(?P<value>{_EMAIL})",
            _value_parser("email", "The user's email is {value}."),
        ),
        (
            ("number", "contact", "phone", "mobile", "cell"),
            r"(?:\b(?:(?:my|new)\s+)?(?:new\s+)?(?:phone\s+|mobile\s+|cell\s+)?number\s*(?:is|:)|"
            r"\b(?:contact|phone|mobile|cell)\s*:)\s*"
            rf"(?P<value>{_PHONE})",
            _value_parser("phone", "The user's phone number is {value}.", check=_valid_phone),
        ),
        (
            ("pronouns",),
            rf"(?:^|\n)\W*pronouns\s*(?:are|:)\s*(?P<value>{_PRONOUNS})",
            _value_parser("pronouns", "The user's pronouns are {value}."),
        ),
        (
            ("birthday",),
            r"^(?:my\s+)?birthday(?:\s+is|'s)\s+(?:on\s+)?"
            rf"(?P<value>{_DATE})",
            _value_parser("birthday", "The user's birthday is {value}."),
        ),
        (
            ("pronouns",),
            rf"\bmy\s+pronouns\s+are\s+(?P<value>{_PRONOUNS})",
            _value_parser("pronouns", "The user's pronouns are {value}."),
        ),
        (
            ("/",),
            rf"\bI\s+(?:use|go\s+by)\s+(?P<value>{_PRONOUNS})",
            _value_parser("pronouns", "The user's pronouns are {value}."),
        ),
        (
            ("birth", "bday", "b-day", "born"),
            r"\b(?:my\s+(?:birthday|bday|b-day|date\s+of\s+birth|birth\s*date)"
            r"(?:\s+is|'s|\s+falls)(?:\s+on)?|(?:\bI\s+was\s+|^)born(?:\s+on)?)\s+"
            rf"(?P<value>{_DATE})",
            _value_parser("birthday", "The user's birthday is {value}."),
        ),
    )
)


# --- Context checks ----------------------------------------------------------------------------

# A dash ends a clause too: "I'm a teacher in Nairobi — what's a good laptop?" states a fact.
_CLAUSE_TAIL = re.compile(r"[^,;.!?\u2014\u2013]*([,;.!?\u2014\u2013]|$)")


# How far around a hit its clause is looked for. Real clauses are far shorter;
# scanning to the sentence's ends made run-on messages quadratic (64 KiB: 33 s).
MAX_CLAUSE_CHARS = 500


def _clause_prefix(sentence: str, start: int) -> str:
    prefix = sentence[max(0, start - MAX_CLAUSE_CHARS) : start]
    last = 0
    for match in _CLAUSE_BREAK.finditer(prefix):
        last = match.end()
    return prefix[last:]


def _in_plain_clause(sentence: str, hit: _Hit) -> bool:
    """The hit's clause is declarative, unhedged and not a question."""
    tail = _CLAUSE_TAIL.match(sentence, hit.end, hit.end + MAX_CLAUSE_CHARS)
    if tail and tail.group(1) == "?":
        return False
    return not _HEDGE.search(_clause_prefix(sentence, hit.start))


def _slot_hits(sentence: str) -> list[_Hit]:
    if starts_like_question(sentence):
        return []
    hits: list[_Hit] = []
    lowered = sentence.lower()
    for needles, pattern, parser in _EXTRACTORS:
        if not any(needle in lowered for needle in needles):
            continue
        for match in pattern.finditer(sentence):
            for hit in parser(sentence, match):
                # "call me"/"I'm": only at the start of a clause, after a greeting at most.
                if (
                    hit.slot == "name"
                    and not match.group().lower().startswith("my")
                    and not _OPENER.match(_clause_prefix(sentence, hit.start).strip())
                ):
                    continue
                if _in_plain_clause(sentence, hit):
                    hits.append(hit)
    return hits


# --- "remember that ..." -----------------------------------------------------------------------

_REMEMBER = re.compile(r"\b(?:remember|(?:don't|do\s+not|never)\s+forget)\b", _FLAGS)
_REMEMBER_LEAD = re.compile(rf"^(?:(?:{W.REMEMBER_LEADS})[\s,!.:-]*)*$", _FLAGS)
_COURTESY_TAIL = re.compile(rf"(?:[\s.!?]*,\s*(?:{W.COURTESIES}))?[\s.!?]*$", _FLAGS)
_PROCEDURE = re.compile(
    r"^(?:that\s+)?(?:(?:you\s+(?:should|must|need\s+to|have\s+to|will|are\s+to)|to)\s+)?"
    r"(?P<adverb>always|never)\s+(?P<body>\S.*)$",
    _FLAGS | re.DOTALL,
)
_NOT_TO = re.compile(r"^(?:not\s+to|to\s+not|to\s+never)\s+(?P<body>\S.*)$", _FLAGS | re.DOTALL)

_ADVERBS = rf"(?:(?:{W.ADVERBS}|[a-z]{{3,}}(?<!p)ly)\s+)*"
_FIRST_PERSON_FIXED = tuple(
    (re.compile(pattern, _FLAGS), replacement)
    for pattern, replacement in (
        (r"\bI\s+am\b", "the user is"),
        (r"\bI'm\b", "the user is"),
        (r"\bI've\b", "the user has"),
        (r"\bI\s+haven't\b", "the user hasn't"),
        (r"\bI\s+have\b", "the user has"),
        (r"\bI\s+don't\b", "the user doesn't"),
        (r"\bI\s+do\s+not\b", "the user does not"),
        (r"\bI\s+do\b", "the user does"),
        (r"\bI'll\b", "the user will"),
        (r"\bI'd\b", "the user would"),
    )
)
_I_VERB = re.compile(rf"\bI\s+({_ADVERBS})([a-z']+)\b", _FLAGS)
_POSSESSIVE = (
    (re.compile(r"\bmy\b", _FLAGS), "the user's"),
    (re.compile(r"\bmine\b", _FLAGS), "the user's"),
    (re.compile(r"\bmyself\b", _FLAGS), "themselves"),
    (re.compile(r"\bme\b", _FLAGS), "the user"),
    (re.compile(r"\bI\b", _FLAGS), "the user"),
)


def _third_person_verb(verb: str) -> str:
    lower = verb.lower()
    regular_past = len(lower) >= 5 and lower.endswith("ed") and lower not in W.PRESENT_ED
    if lower in W.UNCHANGED_AFTER_I or lower in IRREGULAR_PAST or regular_past:
        return verb
    if lower == "have":
        return "has"
    if lower == "be":
        return "is"
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lower) > 2 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def to_third_person(clause: str) -> str:
    """Rewrite a first-person clause about the user: "I prefer my tea" -> "the user prefers ..."."""
    for pattern, replacement in _FIRST_PERSON_FIXED:
        clause = pattern.sub(replacement, clause)
    clause = _I_VERB.sub(lambda m: f"the user {m.group(1)}{_third_person_verb(m.group(2))}", clause)
    for pattern, replacement in _POSSESSIVE:
        clause = pattern.sub(replacement, clause)
    return clause


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".!?;,: ")
    return _sentence_end(text[:1].upper() + text[1:]) if text else ""


def _short_title(content: str) -> str:
    words = content.rstrip(".").split()
    title = " ".join(words[:8])
    return title if len(title) <= 60 else title[:60].rstrip()


def _remember_candidate(clause: str) -> Candidate | None:
    procedure = _PROCEDURE.match(clause)
    not_to = None if procedure else _NOT_TO.match(clause)
    if procedure or not_to:
        if procedure:
            adverb = procedure.group("adverb").lower()
            body = procedure.group("body")
            content = _sentence(f"{adverb} {to_third_person(body)}")
            subtype = "constraint" if adverb == "never" else "behavioral"
        else:
            assert not_to is not None
            content = _sentence(f"do not {to_third_person(not_to.group('body'))}")
            subtype = "constraint"
        return Candidate(
            kind="procedure",
            content=content,
            title=_short_title(content),
            importance=IMPORTANCE["significant"],
            confidence=CONFIDENCE["stated"],
            tags=["instruction", "remember"],
            procedure_subtype=subtype,
            stage="regex",
        )
    if clause.lower().startswith("to "):
        return None  # "remember to buy milk": a reminder, not a memory
    clause = re.sub(r"^that\s+", "", clause, flags=_FLAGS)
    words = clause.split()
    if not words or words[0].lower().strip(",.") in W.DEICTIC:
        return None
    if starts_like_question(clause) or not is_sentence(clause):
        return None
    content = _sentence(to_third_person(clause))
    if len(content.split()) < 3:
        return None
    return Candidate(
        kind="fact",
        content=content,
        title=_short_title(content),
        importance=IMPORTANCE["significant"],
        confidence=CONFIDENCE["stated"],
        tags=["remember"],
        stage="regex",
    )


def _remember_clause(sentence: str) -> str | None:
    """The clause after a leading "remember"/"don't forget", or None when there is none."""
    match = _REMEMBER.search(sentence)
    if not match or not _REMEMBER_LEAD.match(sentence[: match.start()].strip()):
        return None
    clause = sentence[match.end() :].lstrip(" ,:;-\u2013\u2014")
    clause = _COURTESY_TAIL.sub("", clause)
    return clause.strip() or None


def _uncovered_words(clause: str, hits: list[_Hit]) -> int:
    covered = [False] * len(clause)
    for hit in hits:
        for index in range(hit.start, min(hit.end, len(clause))):
            covered[index] = True
    rest = "".join(" " if flag else char for char, flag in zip(clause, covered, strict=True))
    return len(re.findall(r"[^\W_]+", rest))


# --- Entry point -------------------------------------------------------------------------------


def _candidate(hit: _Hit) -> Candidate:
    importance = IMPORTANCE["core"] if hit.slot in _CORE_SLOTS else IMPORTANCE["significant"]
    return Candidate(
        kind="fact",
        content=hit.content,
        title=SLOT_TITLES[hit.slot],
        importance=importance,
        confidence=hit.confidence,
        tags=["identity", hit.slot],
        slot=hit.slot,
        stage="regex",
    )


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
    rf"^(?:(?:and|so|but|also|currently|now|still|{W.GREETINGS})\s+)*(?:{_I_AM}\s+)?"
    r"(?:(?:currently|now|still)\s+)?",
    re.IGNORECASE,
)
_AGE_PIECE = re.compile(r"^(?:aged?\s+)?(?P<value>\d{1,2})(?:\s*(?:years old|yo|y/o))?$", re.I)
_ROLE_PIECE = re.compile(r"^(?P<det>an?\s+|the\s+)?", re.IGNORECASE)
_AT_PIECE = re.compile(r"(?:^|\s)(?:at|with)\s+(?=[A-Z])")
# "from X" is where the user comes from, not where they live ("I'm Ada from Paris").
_IN_PIECE = re.compile(r"(?:^|\s)(?:in|based in|living in|live in|near)\s+", re.IGNORECASE)
_PLACE_PIECE = re.compile(r"^(?=[A-Z][\w\u00c0-\u024f]+(?:\s+[A-Z][\w\u00c0-\u024f]+){0,2}$)")


def _intro_hits(text: str, named: bool) -> list[_Hit]:
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


def _introduction(text: str, named: bool) -> tuple[list[_Hit], list[str]]:
    body = _INTRO_MARK.sub("", text, count=1)
    raw = [
        _TRAILING_PARTICLE.sub("", LIST_MARK.sub("", p)).strip(" .:")
        for p in _PIECE_CUT.split(_prepare(body))
    ]
    raw = [p for p in raw if p and not _GREETING_ONLY.match(p)]
    if raw and (_I_AM_NAME.match(raw[0]) or re.match(r"^name\s*:", raw[0], re.IGNORECASE)):
        named = True  # "I'm Raj, 29, ...", "Name: Karin Olsen. Job: ..."
    opens_with_role = bool(raw) and any(
        hit.slot == "role" for hit in _piece_hits(_PIECE_LEAD.sub("", raw[0]), [], named=True)
    )
    if not (named or _INTRO_MARK.match(text) or opens_with_role):
        return [], []
    hits: list[_Hit] = []
    rest: list[str] = []
    for piece in raw:
        if starts_like_question(piece) or piece.lower().endswith(" here"):
            continue  # questions; "Dev here" is a name, read by the sentence stage
        name = _I_AM_NAME.match(piece)
        if name and not any(h.slot == "name" for h in hits):
            hits += _plain_name(piece, name)
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


_PRONOUN_PIECE = re.compile(rf"^(?P<value>{_PRONOUNS})$", re.IGNORECASE)
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


def _labelled_piece(piece: str, label: str) -> list[_Hit]:
    """ "Name: Sofía Herrera", "Job: senior PM at Klarna"; other labels fill no slot."""
    slot = _LABEL_SLOTS.get(label.lower().strip())
    value = _LABEL_PIECE.sub("", piece, count=1)
    anchor = re.match(r"", value)
    if slot is None or anchor is None:
        return []
    if slot == "name":
        return _plain_name(value, re.match(r"(?P<value>.+)", value))  # type: ignore[arg-type]
    if slot == "age":
        return _piece_hits(value, [], named=True) if _AGE_PIECE.match(value) else []
    if slot == "location":
        return _parse_location(value, anchor)
    return _role_parser(strict=False)(value, _ROLE_PIECE.match(value))  # type: ignore[arg-type]


def _piece_hits(piece: str, earlier: list[_Hit], *, named: bool) -> list[_Hit]:
    labelled = _LABEL_PIECE.match(piece)
    if labelled:
        return _labelled_piece(piece, labelled.group("label"))
    pronouns = _PRONOUN_PIECE.match(piece)
    if pronouns:
        value = pronouns.group("value")
        return [
            _Hit(
                "pronouns", f"The user's pronouns are {value}.", 0, len(piece), CONFIDENCE["stated"]
            )
        ]
    age = _AGE_PIECE.match(piece) or _AGE_BEFORE_ROLE.match(piece)
    if age:
        value = age.group("value")
        found = [_Hit("age", f"The user is {value} years old.", 0, age.end(), CONFIDENCE["stated"])]
        rest = piece[age.end() :]  # "a 34-year-old software dev from Kyiv": the role follows
        return found + (_piece_hits(f"a {rest}", earlier, named=named) if rest else [])
    piece = _WORKING_AS.sub("", piece)
    hits = _role_parser(strict=True)(piece, _ROLE_PIECE.match(piece))  # type: ignore[arg-type]
    if not any(h.slot == "employer" for h in hits):
        at = _AT_PIECE.search(piece)
        studies = any(word in W.STUDY_ROLES for word in piece.lower().split())
        short = at is not None and len(piece[: at.start()].split()) <= 2
        if at and (hits or at.start() == 0 or short) and not studies:
            hits += _parse_employer(piece, at)
    words = piece.lower().split()
    first = words[0]
    opening = lexical(first)
    activity = first not in _WHERE_VERBS and opening.verb and (opening.gerund or not opening.noun)
    stated = any(w in _FINITE for w in words[1:])
    if activity or stated:
        return hits  # "writing a story set in Paris", "My novel is set in Rome": not a home
    for located in _IN_PIECE.finditer(piece):
        found = _parse_location(piece, located)
        if found:
            return hits + found
    bare = _PLACE_PIECE.match(piece)
    if bare and not hits and not is_known_word(first):
        # A lone name: the user's before anything else is said, a place after.
        if any(h.slot in ("age", "role", "employer") for h in earlier):
            return _parse_location(piece, bare)
        if not named and not earlier:
            return _plain_name(piece, re.match(r"(?P<value>.+)", piece))  # type: ignore[arg-type]
    return hits


def extract(text: str) -> list[Candidate]:
    """Identity facts and explicit remember-requests in a USER message, in text order."""
    if not text or not text.strip():
        return []
    found: list[tuple[int, Candidate | _Hit]] = []
    order = 0
    for sentence in _sentences(_prepare(text)):
        clause = _remember_clause(sentence)
        if clause is not None:
            remembered = _remember_candidate(clause)
            hits = [] if remembered and remembered.kind == "procedure" else _slot_hits(clause)
            if remembered and (not hits or _uncovered_words(clause, hits) >= 3):
                found.append((order, remembered))
                order += 1
        else:
            hits = _slot_hits(sentence)
        for hit in sorted(hits, key=lambda h: h.start):
            found.append((order, hit))
            order += 1

    named = any(isinstance(item, _Hit) and item.slot == "name" for _, item in found)
    for hit in _intro_hits(text, named):
        found.append((order, hit))  # after the sentence readings: those win a tie
        order += 1

    # One candidate per slot: the most confident, then the earliest.
    best: dict[str, tuple[int, _Hit]] = {}
    for position, item in found:
        if isinstance(item, _Hit):
            current = best.get(item.slot)
            if current is None or item.confidence > current[1].confidence:
                best[item.slot] = (position, item)
    keep = {position for position, _ in best.values()}
    candidates: list[Candidate] = []
    seen: set[str] = set()
    for position, item in found:
        if isinstance(item, _Hit):
            if position not in keep:
                continue
            candidate = _candidate(item)
        else:
            candidate = item
        key = candidate.content.lower()
        if key not in seen:
            seen.add(key)
            candidates.append(candidate)
    return candidates
