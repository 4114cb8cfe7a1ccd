"""The classification stage's contract: one schema, one prompt, one way to read the answer.

``classify(chat, text=..., role=...)`` is the stage. With a provider that has a
model (``openai``) it asks for ``CLASSIFY_SCHEMA`` (strict ``json_schema`` output
through ``chat.complete_json``) and turns the answer into candidates with
``candidates_from_json``; with the offline ``heuristic`` provider it runs the rules
in ``memories.extraction.rules``, which share the helpers here (time hints, titles,
tags), so both paths produce identical shapes. Providers return JSON-shaped data
only and import nothing from the apps.

The model answers with bucket names ("significant", "stated"), never raw
floats: models are poor at calibrated numbers but good at picking a labelled
bucket, and the buckets map onto the floats of ``IMPORTANCE``/``CONFIDENCE``.

A malformed answer is a ``ProviderError`` (the task queue retries it); only a
well-formed ``{"memories": []}`` means "nothing to remember".
"""

from __future__ import annotations

import calendar
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.utils import timezone

from memories.extraction.claims import ASSERTED, MOODS, PAST_STATE, POLARITIES, USER, Claim, folded
from memories.extraction.classify_contract import (
    MAX_TAGS,
    MAX_TITLE,
    MEMORY_SCHEMA,
    NONE,
    OPTIONAL,
)
from memories.extraction.types import (
    CONFIDENCE,
    IMPORTANCE,
    Candidate,
)
from spaceduck.core.providers.errors import ProviderError

logger = logging.getLogger(__name__)

_PERIODS = r"(?:day|week|month|year|fortnight)s?"
_MONTH_NAMES = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}
# Longest alternatives first, so "last week" wins over "last".
TIME_HINT = re.compile(
    r"\b(?:"
    r"earlier today|this (?:morning|afternoon|evening)|today|tonight|last night|yesterday"
    r"|the day before yesterday"
    rf"|(?:\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
    rf"\s+{_PERIODS}\s+ago"
    rf"|last\s+(?:{_PERIODS}|{_WEEKDAYS}|weekend|summer|winter|spring|autumn|fall)"
    rf"|this\s+(?:past\s+)?(?:week|month|year|weekend)"
    rf"|(?:on\s+)?{_MONTH_NAMES}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|(?:on\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAMES}(?:\s+\d{{4}})?"
    rf"|(?:on\s+)?{_WEEKDAYS}"
    rf"|in\s+{_MONTH_NAMES}(?:\s+\d{{4}})?"
    r"|in\s+(?:19|20)\d{2}"
    r")\b",
    re.IGNORECASE,
)
_AGO = re.compile(rf"^(\d+|{'|'.join(_NUMBER_WORDS)})\s+({_PERIODS})\s+ago$")
_MONTH_DAY = re.compile(rf"^(?:on\s+)?({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?$")
_DAY_MONTH = re.compile(
    rf"^(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})$"
)
_WEEKDAY = re.compile(rf"^(?:last\s+|on\s+)?({_WEEKDAYS})$")
# A full date: "on 3 March 2024", "March 3, 2024".
_MONTH_DAY_YEAR = re.compile(
    rf"^(?:on\s+)?({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})$"
)
_DAY_MONTH_YEAR = re.compile(
    rf"^(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES}),?\s+(\d{{4}})$"
)
_TAG_WORD = re.compile(r"[^a-z0-9-]+")


# --- reading a model's answer ------------------------------------------------------------
def candidates_from_json(
    payload: Mapping[str, Any], *, now: datetime | None = None
) -> list[Candidate]:
    """Candidates (stage="model"; the pipeline adds its name) from a CLASSIFY_SCHEMA answer;
    ProviderError when malformed.

    Strict on structure (keys, types, enums) because a server that ignored the
    schema must fail loudly; lenient on cosmetics (tag case, long titles)
    because those can be repaired without guessing what the model meant.
    """
    memories = payload.get("memories") if isinstance(payload, Mapping) else None
    if not isinstance(memories, list):
        raise ProviderError("classification answer has no 'memories' list")
    now = now or timezone.now()
    return [_candidate(item, index, now) for index, item in enumerate(memories)]


def _candidate(item: Any, index: int, now: datetime) -> Candidate:
    where = f"classification memory #{index}"
    if not isinstance(item, Mapping):
        raise ProviderError(f"{where} is not an object")
    problem = _item_problem(item)
    if problem:
        raise ProviderError(f"{where} {problem}")
    kind, retention = item["kind"], item["retention"]
    subtype = _none_to_empty(item["procedure_subtype"])
    reason = _none_to_empty(item["reject_reason"])
    content = " ".join(item["content"].split())
    if not content:
        raise ProviderError(f"{where} has empty content")
    if kind == "procedure" and not subtype:
        raise ProviderError(f"{where} is a procedure without procedure_subtype")
    if retention == "reject" and not reason:
        raise ProviderError(f"{where} is rejected without reject_reason")
    time_hint = item["time_hint"].strip()
    said = _said(item.get("claim"), where)
    slot = _none_to_empty(item["slot"])
    past = said.claim is not None and said.claim.mood == PAST_STATE
    if past and kind == "fact":
        # A former state happened: an episode with its time, neither a belief nor a slot.
        kind, slot = "episode", ""
    occurred_at = resolve_time_hint(time_hint, now) if kind == "episode" else None
    if past and kind == "episode":
        occurred_at = occurred_at or said.valid_from or said.valid_until
    return Candidate(
        kind=kind,
        content=content,
        title=clip_title(item["title"] or content),
        summary=" ".join(item["summary"].split()) or content,
        importance=IMPORTANCE[item["importance"]],
        confidence=CONFIDENCE[item["confidence"]],
        tags=clean_tags(item["tags"]) or [kind],
        procedure_subtype=subtype if kind == "procedure" else "",
        slot=slot,
        time_hint=time_hint,
        occurred_at=occurred_at,
        retention=retention,
        reject_reason=reason if retention == "reject" else "",  # a stored memory has no reason
        stage="model",
        claim=said.claim,
        doubt=_doubt(said.claim),
        valid_from=said.valid_from,
        valid_until=said.valid_until,
    )


@dataclass(frozen=True)
class _Said:
    """The model's claim and when it holds, as read from one memory's ``claim``."""

    claim: Claim | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None


# Said of many things at once ("likes sushi", "likes jazz"): the thing is part of what is
# claimed, or liking one thing would replace liking another. The model is asked to write it
# ("like:sushi"); a predicate that forgets it gets it here.
_MANY = frozenset({"like", "own", "play", "speak", "drink", "allergic_to"})
_SAME_PREDICATE = {"love": "like", "enjoy": "like", "adore": "like", "likes": "like"}
_OLD_KEYS = {"holder": "subject", "predicate": "attribute"}  # the claim before moods
# Words of time or emphasis around the object that do not change it ("ghent too",
# "sushi these days"): only at its ends, so "still life" and "now tv" stay.
_WHEN = r"(?:these days|nowadays|currently|at the moment)"
_VALUE_FILLER = re.compile(
    rf"^(?:{_WHEN}|an?)\s+|[\s,]+(?:{_WHEN}|too|as well|also|either|now|still)$"
)


def _said(value: object, where: str) -> _Said:
    """The model's claim, or none: null, or a predicate that is empty or "none" (the rules
    then read the claim from the content, memories.extraction.claims.claim_of). What the model
    got wrong is logged and left out, never a failed message: an unknown polarity or mood
    drops the claim (the rules read it), a date that is not ISO 8601 drops that date."""
    if not isinstance(value, Mapping):
        return _Said()
    parts = {key: value.get(key, value.get(_OLD_KEYS.get(key, key))) for key in _CLAIM_KEYS}
    parts["mood"] = parts["mood"] or ASSERTED  # the claim before moods had none
    text = {k: v.strip() for k, v in parts.items() if isinstance(v, str)}
    predicate = _predicate(text.get("predicate", ""))
    if not predicate or predicate == NONE:
        return _Said()
    if any(key not in text for key in ("holder", "value", "polarity", "mood")):
        logger.warning("%s: claim with a field that is not a string left to the rules", where)
        return _Said()
    polarity, mood = text["polarity"].lower(), text["mood"].lower()
    if polarity not in POLARITIES or mood not in MOODS:
        logger.warning(
            "%s: claim with polarity %r, mood %r left to the rules",
            where,
            parts["polarity"],
            parts["mood"],
        )
        return _Said()
    valid_from = _date(parts["valid_from"], where, "valid_from", end_of_day=False)
    valid_until = _date(parts["valid_until"], where, "valid_until", end_of_day=True)
    if valid_from and valid_until and valid_until < valid_from:
        logger.warning("%s: valid_until before valid_from, dropped", where)
        valid_until = None
    thing = _value(text["value"])
    head, _, of = predicate.partition(":")
    if head in _MANY and not of and thing:
        predicate = f"{head}:{thing}"
    claim = folded(Claim(_holder(text["holder"]), predicate, thing, polarity, mood=mood))
    return _Said(claim, valid_from, valid_until)


_CLAIM_KEYS = ("holder", "predicate", "value", "polarity", "mood", "valid_from", "valid_until")


def _holder(text: str) -> str:
    """ "the user", "I" -> "user"; "The user's wife", "my wife" -> "user's wife"; "Priya"."""
    holder = " ".join(text.lower().split()).removeprefix("the ")
    if holder in ("", "user", "i", "me", "myself"):
        return USER
    return re.sub(r"^(?:my|the user's) ", "user's ", holder)


def _predicate(text: str) -> str:
    """snake_case, synonyms folded: "Lives In" -> "lives_in", "love:Sushi" -> "like:sushi"."""
    head, colon, of = text.partition(":")
    head = re.sub(r"[\s-]+", "_", head.strip().lower()).strip("_")
    head = _SAME_PREDICATE.get(head, head)
    return f"{head}:{_value(of)}" if colon and _value(of) else head


def _value(text: str) -> str:
    """Lower case; fillers, "a"/"an" and trailing punctuation gone: "A Volvo too." -> "volvo"."""
    value, before = " ".join(text.lower().split()).strip(" .!;:,"), ""
    while value != before:  # "ghent too these days"
        before, value = value, _VALUE_FILLER.sub("", value).strip(" .!;:,")
    return value


def _date(value: object, where: str, name: str, *, end_of_day: bool) -> datetime | None:
    """An ISO 8601 date or date-time, aware (the default time zone when none is given); a
    bare date's end is the end of that day. None (logged) when it is not one."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        logger.warning("%s: %s %r is not a date, dropped", where, name, value)
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            when = datetime.combine(day, time.max if end_of_day else time.min)
        else:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        logger.warning("%s: %s %r is not an ISO 8601 date, dropped", where, name, value)
        return None
    return when if timezone.is_aware(when) else timezone.make_aware(when)


def _doubt(claim: Claim | None) -> str:
    """Why the candidate is not one of the user's beliefs on its own: said as a hypothetical,
    a question or someone's report ("" when asserted; a past state is an episode instead)."""
    if claim is None or claim.mood in (ASSERTED, PAST_STATE):
        return ""
    return f"the model read it as {claim.mood}"


def _item_problem(item: Mapping[str, Any]) -> str | None:
    """What is wrong with one memory object against MEMORY_SCHEMA, or None."""
    properties: Mapping[str, Any] = MEMORY_SCHEMA["properties"]
    for key, spec in properties.items():
        if key not in item and key in OPTIONAL:
            continue
        if key not in item:
            return f"is missing the required key {key!r}"
        if "type" not in spec:
            continue  # the claim (an object or null): read leniently by _said
        value = item[key]
        if spec["type"] == "string" and not isinstance(value, str):
            return f"has {key!r} of type {type(value).__name__}, expected string"
        if spec["type"] == "array" and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            return f"has {key!r} that is not a list of strings"
        # "" is accepted for "none": some servers send it despite the enum.
        allowed = spec.get("enum")
        if allowed and value not in allowed and not (value == "" and NONE in allowed):
            return f"has {key!r} = {value!r}, expected one of {allowed}"
    return None


def _none_to_empty(value: str) -> str:
    return "" if value in ("", NONE) else value


# --- shared cosmetics --------------------------------------------------------------------
def clip_title(text: str, limit: int = MAX_TITLE) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary."""
    title = " ".join(text.split()).rstrip(".")
    if len(title) <= limit:
        return title
    cut = title[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "..."


def clean_tags(tags: list[str]) -> list[str]:
    """Lowercase, one word each (hyphens kept), no repeats, at most MAX_TAGS."""
    out: list[str] = []
    for tag in tags:
        word = _TAG_WORD.sub("-", tag.strip().lower()).strip("-")
        if word and word not in out:
            out.append(word)
    return out[:MAX_TAGS]


# --- time hints ----------------------------------------------------------------------------
def find_time_hint(text: str) -> str:
    """The first phrase in ``text`` that dates an event ("last week", "on March 3"), or ""."""
    match = TIME_HINT.search(text)
    return " ".join(match.group(0).split()) if match else ""


def resolve_time_hint(hint: str, now: datetime) -> datetime | None:
    """When a simple relative hint happened, relative to ``now``; None when unsure.

    Only hints with one clear reading resolve. "In June" or "last summer" stay
    None: a made-up day would look more precise than what the user said.
    """
    text = " ".join(hint.lower().split())
    if not text:
        return None
    fixed = _fixed_offset(text, now)
    if fixed is not None:
        return fixed
    match = _AGO.match(text)
    if match:
        return _ago(now, _NUMBER_WORDS.get(match.group(1)) or int(match.group(1)), match.group(2))
    if text.startswith("last "):
        return _last(now, text[5:])
    match = _WEEKDAY.match(text)
    if match:  # "on Friday" in a past-tense sentence: the most recent Friday
        return _previous_weekday(now, match.group(1))
    match = _MONTH_DAY_YEAR.match(text)
    if match:
        return _full_date(now, int(match.group(3)), match.group(1), int(match.group(2)))
    match = _DAY_MONTH_YEAR.match(text)
    if match:
        return _full_date(now, int(match.group(3)), match.group(2), int(match.group(1)))
    match = _MONTH_DAY.match(text)
    if match:
        return _past_date(now, match.group(1), int(match.group(2)))
    match = _DAY_MONTH.match(text)
    if match:
        return _past_date(now, match.group(2), int(match.group(1)))
    return None


def _fixed_offset(text: str, now: datetime) -> datetime | None:
    days = {
        "today": 0,
        "earlier today": 0,
        "this morning": 0,
        "this afternoon": 0,
        "this evening": 0,
        "tonight": 0,
        "yesterday": 1,
        "last night": 1,
        "the day before yesterday": 2,
    }.get(text)
    return None if days is None else now - timedelta(days=days)


def _ago(now: datetime, count: int, period: str) -> datetime | None:
    unit = period.rstrip("s")
    if unit == "day":
        return now - timedelta(days=count)
    if unit == "week":
        return now - timedelta(weeks=count)
    if unit == "fortnight":
        return now - timedelta(weeks=2 * count)
    if unit == "month":
        return _months_back(now, count)
    return _months_back(now, 12 * count)  # year


def _last(now: datetime, rest: str) -> datetime | None:
    if rest == "week":
        return now - timedelta(weeks=1)
    if rest == "month":
        return _months_back(now, 1)
    if rest == "year":
        return _months_back(now, 12)
    if re.fullmatch(_WEEKDAYS, rest):
        return _previous_weekday(now, rest)
    return None  # "last summer", "last weekend": no single day


def _months_back(now: datetime, months: int) -> datetime:
    index = now.year * 12 + now.month - 1 - months
    year, month = divmod(index, 12)
    day = min(now.day, calendar.monthrange(year, month + 1)[1])
    return now.replace(year=year, month=month + 1, day=day)


def _previous_weekday(now: datetime, name: str) -> datetime:
    target = list(calendar.day_name).index(name.capitalize())
    back = (now.weekday() - target) % 7 or 7  # "last Monday" on a Monday is a week ago
    return now - timedelta(days=back)


def _full_date(now: datetime, year: int, month_name: str, day: int) -> datetime | None:
    """A date the user wrote out in full, at the same time of day as ``now``; None if no
    such day exists ("31 February 2024")."""
    month = _month_number(month_name)
    if not 1 <= year <= 9999 or day > calendar.monthrange(year, month)[1] or day < 1:
        return None
    return now.replace(year=year, month=month, day=day)


def _past_date(now: datetime, month_name: str, day: int) -> datetime | None:
    month = _month_number(month_name)
    for year in (now.year, now.year - 1):
        if day <= calendar.monthrange(year, month)[1]:
            when = now.replace(year=year, month=month, day=day)
            if when <= now:
                return when
    return None


def _month_number(name: str) -> int:
    prefix = name.lower()[:3]
    return [m.lower() for m in calendar.month_abbr].index(prefix)


_ABSOLUTE_HINT = re.compile(
    rf"^(?:on\s+)?(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAMES}"
    rf"|{_MONTH_NAMES}\.?\s+\d{{1,2}}|in\s+{_MONTH_NAMES}|in\s+(?:19|20)\d{{2}})",
    re.IGNORECASE,
)


def is_relative_hint(hint: str) -> bool:
    """Whether ``hint`` only makes sense next to the day it was said ("yesterday")."""
    return bool(hint) and not _ABSOLUTE_HINT.match(hint.strip())


def date_phrase(hint: str, when: datetime) -> str:
    """A phrase that stays true later, at the precision the hint had.

    "yesterday" -> "on 2 June 2025", "last week" -> "around 26 May 2025",
    "last month" -> "in May 2025", "last year" -> "in 2024".
    """
    text = hint.lower()
    if re.search(r"\byears?\b", text):
        return f"in {when.year}"
    if re.search(r"\bmonths?\b", text):
        return f"in {when:%B} {when.year}"
    day = f"{when.day} {when:%B} {when.year}"
    if re.search(r"\b(?:weeks?|fortnights?)\b", text):
        return f"around {day}"
    return f"on {day}"
