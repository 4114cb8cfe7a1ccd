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
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from memories.extraction.claims import POLARITIES, USER, Claim
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
    return Candidate(
        kind=kind,
        content=content,
        title=clip_title(item["title"] or content),
        summary=" ".join(item["summary"].split()) or content,
        importance=IMPORTANCE[item["importance"]],
        confidence=CONFIDENCE[item["confidence"]],
        tags=clean_tags(item["tags"]) or [kind],
        procedure_subtype=subtype if kind == "procedure" else "",
        slot=_none_to_empty(item["slot"]),
        time_hint=time_hint,
        occurred_at=resolve_time_hint(time_hint, now) if kind == "episode" else None,
        retention=retention,
        reject_reason=reason if retention == "reject" else "",  # a stored memory has no reason
        stage="model",
        claim=_claim(item.get("claim")),
    )


def _claim(value: object) -> Claim | None:
    """The model's claim, or None (no claim, "none", or not well formed: the rules read it)."""
    if not isinstance(value, Mapping):
        return None
    parts = {k: value.get(k) for k in ("subject", "attribute", "value", "polarity")}
    if not all(isinstance(v, str) for v in parts.values()):
        return None
    subject, attribute = str(parts["subject"]).strip().lower(), str(parts["attribute"]).strip()
    polarity = str(parts["polarity"]).strip().lower()
    if polarity not in POLARITIES or not attribute or attribute.lower() == NONE:
        return None
    subject = USER if subject in ("", "user", "the user") else subject.removeprefix("the ")
    return Claim(
        subject, attribute.lower(), " ".join(str(parts["value"]).lower().split()), polarity
    )


def _item_problem(item: Mapping[str, Any]) -> str | None:
    """What is wrong with one memory object against MEMORY_SCHEMA, or None."""
    properties: Mapping[str, Any] = MEMORY_SCHEMA["properties"]
    for key, spec in properties.items():
        if key not in item and key in OPTIONAL:
            continue
        if key not in item:
            return f"is missing the required key {key!r}"
        if spec["type"] == "object":
            continue  # the claim: read leniently by _claim
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
