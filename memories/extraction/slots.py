"""The identity slots of the regex stage (regex.py): sentences prepared and split, the
trigger patterns (regex_patterns.py) matched, each match parsed into a slot value, and the
clause checks (plain, first person, not negated or hedged) a hit must pass."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import islice

from memories.extraction import regex_patterns as P
from memories.extraction import regex_words as W
from memories.extraction.guard import starts_like_question, strip_recalled
from memories.extraction.reported import strip_reported
from memories.extraction.sentences import is_known_word
from memories.extraction.types import CONFIDENCE

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
CORE_SLOTS = frozenset({"name", "location", "employer", "role"})

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
def prepare(text: str) -> str:
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


def sentences(text: str) -> list[str]:
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
class Hit:
    slot: str
    content: str
    start: int  # trigger start, in the sentence (or clause) it was found in
    end: int  # value end
    confidence: float
    order: int = 0


def sentence_end(value: str) -> str:
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


Parser = Callable[[str, re.Match[str]], list[Hit]]


def _name_parser(*, explicit: bool) -> Parser:
    def parse(sentence: str, match: re.Match[str]) -> list[Hit]:
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
        content = f"The user's name is {sentence_end(name)}"
        return [Hit("name", content, match.start(), phrase.end, confidence)]

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


def parse_location(sentence: str, match: re.Match[str]) -> list[Hit]:
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
    content = f"The user lives in {sentence_end(value)}"
    return [Hit("location", content, match.start(), end, CONFIDENCE["stated"])]


_NOT_A_HOME = re.compile(rf"\b(?:{W.NOT_A_HOME})\b", re.IGNORECASE)


def _household_move(sentence: str, match: re.Match[str]) -> list[Hit]:
    if _NOT_A_HOME.search(sentence):
        return []
    return parse_location(sentence, match)


def _employer_hit(sentence: str, pos: int, start: int) -> Hit | None:
    phrase = _phrase(
        sentence,
        pos,
        max_words=6,
        allow_lower=_all_lower(sentence),
        connectors=W.EMPLOYER_CONNECTORS,
    )
    if not phrase.words or phrase.text.lower() in W.EMPLOYER_BLOCK:
        return None
    content = f"The user works at {sentence_end(phrase.text)}"
    return Hit("employer", content, start, phrase.end, CONFIDENCE["stated"])


def parse_employer(sentence: str, match: re.Match[str]) -> list[Hit]:
    hit = _employer_hit(sentence, match.end(), match.start())
    return [hit] if hit else []


def _role_content(det: str, role: str) -> str:
    head = role.split()[-1].lower()
    if head in W.STUDY_ROLES:
        article = det or ("an " if role[:1].lower() in "aeiou" else "a ")
        return f"The user is {article}{sentence_end(role)}"
    return f"The user works as {det}{sentence_end(role)}"


def role_parser(*, strict: bool) -> Parser:
    """``strict``: the head noun must be a known occupation ("I'm a nurse", not "I'm a fan")."""

    def parse(sentence: str, match: re.Match[str]) -> list[Hit]:
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
            Hit(
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


def _age_either(sentence: str, match: re.Match[str]) -> list[Hit]:
    """The age from whichever group matched ("a 34-year-old", "aged 34")."""
    value = match.group("value") or match.group("value2")
    if not value or not _valid_age(value):
        return []
    return [
        Hit(
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
    def parse(sentence: str, match: re.Match[str]) -> list[Hit]:
        value = match.group("value").strip().rstrip(".")
        if check is not None and not check(value):
            return []
        content = template.format(value=value)
        return [Hit(slot, content, match.start(), match.end("value"), CONFIDENCE["stated"])]

    return parse


def _valid_age(value: str) -> bool:
    return 1 <= int(value) <= 120


def _valid_phone(value: str) -> bool:
    return 7 <= sum(char.isdigit() for char in value) <= 15


# --- Triggers ----------------------------------------------------------------------------------

FLAGS = re.IGNORECASE


# (needles, pattern, parser): a pattern only runs on sentences (lower-cased) containing one
# of its needles, which skips most of the regex work on ordinary chat.
def _less_sure(parser: Parser) -> Parser:
    """``parser`` at "likely": a reading a plainer statement in the same message overrides."""

    def parse(sentence: str, match: re.Match[str]) -> list[Hit]:
        return [replace(h, confidence=CONFIDENCE["likely"]) for h in parser(sentence, match)]

    return parse


def plain_name(sentence: str, match: re.Match[str]) -> list[Hit]:
    """The name in the ``value`` group as it stands ("Dev here", "im chloe"), title-cased."""
    raw = match.group("value")
    if raw.lower() in W.NOT_NAMES or (len(raw) > 2 and raw.isupper()):
        return []  # "I'm ADHD", "I'm OK"
    if raw.islower() and is_known_word(raw):
        return []  # "im tired"
    value = _title_name(raw)
    content = f"The user's name is {sentence_end(value)}"
    return [Hit("name", content, match.start(), match.end(), CONFIDENCE["stated"])]


_ROLE_SUFFIX = re.compile(r"(?:ologist|ician|iatrist|ographer|ometrist|apist)s?$")

# The parsers the trigger patterns name (regex_patterns.SLOT_PATTERNS).
_PARSERS: dict[str, Parser] = {
    "name_explicit": _name_parser(explicit=True),
    "name": _name_parser(explicit=False),
    "plain_name": plain_name,
    "location": parse_location,
    "location_less_sure": _less_sure(parse_location),
    "household_move": _household_move,
    "employer": parse_employer,
    "role": role_parser(strict=True),
    "role_loose": role_parser(strict=False),
    "age": _value_parser("age", "The user is {value} years old.", check=_valid_age),
    "age_either": _age_either,
    "email": _value_parser("email", "The user's email is {value}."),
    "phone": _value_parser("phone", "The user's phone number is {value}.", check=_valid_phone),
    "pronouns": _value_parser("pronouns", "The user's pronouns are {value}."),
    "birthday": _value_parser("birthday", "The user's birthday is {value}."),
}
_EXTRACTORS: tuple[tuple[tuple[str, ...], re.Pattern[str], Parser], ...] = tuple(
    (needles, re.compile(pattern, FLAGS), _PARSERS[parser])
    for needles, pattern, parser in P.SLOT_PATTERNS
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


def _in_plain_clause(sentence: str, hit: Hit) -> bool:
    """The hit's clause is declarative, unhedged and not a question."""
    tail = _CLAUSE_TAIL.match(sentence, hit.end, hit.end + MAX_CLAUSE_CHARS)
    if tail and tail.group(1) == "?":
        return False
    return not _HEDGE.search(_clause_prefix(sentence, hit.start))


def slot_hits(sentence: str) -> list[Hit]:
    if starts_like_question(sentence):
        return []
    hits: list[Hit] = []
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
