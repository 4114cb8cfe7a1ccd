"""The date ranges a recall query names ("in October", "two weeks before 8 May 2023").

Recall boosts memories whose ``occurred_at`` falls in one of these ranges
(``date_match``). ``query_dates`` resolves the query against the moment it is
asked, with the past preferred: "in December" asked in November 2023 is
December 2022.

Most forms are read by the small regex grammar below rather than by
``dateparser``: the grammar has to know each expression's extent anyway (a
month is a month, not its 15th, which is what dateparser returns), it rejects
"May I ask..." / "a second opinion" / "2 dogs", and it costs microseconds where
``dateparser.search.search_dates`` costs 1-3 ms per query and up to ~20 ms on
anchored forms it gets wrong ("two weeks before August 11, 2023"). dateparser
is the fallback for numeric and unusual day formats ("5/8/2023", "May the
8th"), called only when a cheap pre-check and the residual text say it could
find something, and its answers are accepted only when they name a day.

Ranges are whole days in UTC. A question that names a full date ("last Friday,
as mentioned on 23 January, 2022") has its relative and year-less expressions
resolved against that date, not against now: the date is when it was said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache

# [first day, day after the last)
_Span = tuple[date, date]
_Resolve = Callable[[date], _Span | None]

# Days; linear fall-off in date_match. A week absorbs an event stored under the
# day it was talked about rather than the day it happened.
DEFAULT_SLACK = timedelta(days=7)
_MIN_YEAR, _MAX_YEAR = 1900, 2100


@dataclass(frozen=True)
class DateRange:
    start: datetime  # aware UTC, inclusive
    end: datetime  # aware UTC, exclusive
    text: str  # the words of the query it came from, for the explanation


# --- vocabulary -------------------------------------------------------------

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Meteorological, northern: (first month, months long). Winter is labelled by
# the year of its January (NOAA's "DJF"), so winter 2023 is Dec 2022 - Feb 2023.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {
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
    "eleven": 11,
    "twelve": 12,
}

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_WEEKDAY = "|".join(_WEEKDAYS)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b"
_YEAR = r"(?P<year>19\d\d|20\d\d|2100)\b"
_YEAR_SEP = r"(?:\s*,\s*|\s+)"
_NUM = (
    r"(?P<n>\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|a\s+couple\s+of)"
)
_UNIT = r"(?P<unit>day|week|fortnight|month|year)"
_F = re.IGNORECASE

# Anything a date could be made of. Most questions fail this and cost one scan.
_PRECHECK = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun"
    r"|yesterday|today|tonight|ago|days?\b|week|fortnight|month|year|summer|winter|spring|autumn"
    r"|fall)"
    r"|\b(?:19|20)\d\d|\d[/.-]\d",
    _F,
)

# --- calendar arithmetic ----------------------------------------------------


def _day(d: date) -> _Span:
    return d, d + timedelta(days=1)


def _month(year: int, month: int) -> _Span:
    following = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, 1), following


def _year(year: int) -> _Span:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _week(d: date) -> _Span:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=7)


def _around(d: date, days: int) -> _Span:
    # Centred: "two weeks ago" is a fuzzy point, not a calendar week.
    return d - timedelta(days=days // 2), d + timedelta(days=days - days // 2)


def _add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    day = min(d.day, (_month(year, month + 1)[1] - timedelta(days=1)).day)
    return date(year, month + 1, day)


def _season(name: str, label: int) -> _Span:
    first = _SEASONS[name]
    start = date(label - 1, 12, 1) if first == 12 else date(label, first, 1)
    return start, _add_months(start, 3)


def _weekend(saturday: date) -> _Span:
    return saturday, saturday + timedelta(days=2)


def _weekday_on_or_before(d: date, weekday: int) -> date:
    return d - timedelta(days=(d.weekday() - weekday) % 7)


def _number(word: str) -> int:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return 2 if "couple" in word else _NUMBERS[word]


def _back(ref: date, n: int, unit: str) -> date:
    """``ref`` moved ``n`` units (negative: forward) into the past."""
    if unit == "day":
        return ref - timedelta(days=n)
    if unit in ("week", "fortnight"):
        return ref - timedelta(days=n * (14 if unit == "fortnight" else 7))
    return _add_months(ref, -n * (12 if unit == "year" else 1))


def _unit_around(d: date, unit: str) -> _Span:
    """The extent of "<n> <unit>s ago/before": a day, a week around it, its month or year."""
    if unit == "day":
        return _day(d)
    if unit in ("week", "fortnight"):
        return _around(d, 7)
    return _month(d.year, d.month) if unit == "month" else _year(d.year)


# --- hits -------------------------------------------------------------------


@dataclass
class _Hit:
    start: int
    end: int
    resolve: _Resolve  # reference day -> span; ignored by fully explicit dates
    day: date | None = None  # a full explicit date: the reference for the rest
    anchorable: bool = False  # absolute, so "the week before <it>" applies


def _explicit(span: _Span) -> _Resolve:
    return lambda _ref: span


def _latest_day(month: int, day: int, ref: date) -> date | None:
    for year in range(ref.year, ref.year - 9, -1):  # 8 years covers 29 February
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= ref:
            return candidate
    return None


def _day_hit(m: re.Match[str], month: int, day: int, year: str | None) -> _Hit | None:
    if not year:
        if not 1 <= day <= 31:
            return None
        return _Hit(m.start(), m.end(), _yearless_day(month, day), anchorable=True)
    try:
        d = date(int(year), month, day)
    except ValueError:
        return None
    return _Hit(m.start(), m.end(), _explicit(_day(d)), day=d, anchorable=True)


def _yearless_day(month: int, day: int) -> _Resolve:
    def resolve(ref: date) -> _Span | None:
        d = _latest_day(month, day, ref)
        return _day(d) if d else None

    return resolve


def _iso(m: re.Match[str]) -> _Hit | None:
    return _day_hit(m, int(m["mon"]), int(m["day"]), m["year"])


def _iso_month(m: re.Match[str]) -> _Hit | None:
    span = _month(int(m["year"]), int(m["mon"]))
    return _Hit(m.start(), m.end(), _explicit(span), anchorable=True)


def _month_day(m: re.Match[str]) -> _Hit | None:
    return _day_hit(m, _MONTHS[m["month"].lower()], int(m["day"]), m["year"])


def _month_year(m: re.Match[str]) -> _Hit | None:
    span = _month(int(m["year"]), _MONTHS[m["month"].lower()])
    return _Hit(m.start(), m.end(), _explicit(span), anchorable=True)


def _season_year(m: re.Match[str]) -> _Hit | None:
    span = _season(m["season"].lower(), int(m["year"]))
    return _Hit(m.start(), m.end(), _explicit(span), anchorable=True)


def _decade(m: re.Match[str]) -> _Hit | None:
    first = int(m["decade"])
    return _Hit(m.start(), m.end(), _explicit((date(first, 1, 1), date(first + 10, 1, 1))))


def _bare_year(m: re.Match[str]) -> _Hit | None:
    return _Hit(m.start("year"), m.end(), _explicit(_year(int(m["year"]))), anchorable=True)


def _month_alone(m: re.Match[str]) -> _Hit | None:
    month = _MONTHS[m["month"].lower()]
    which = (m["mod"] or "").lower()

    def resolve(ref: date) -> _Span:
        this_one = date(ref.year, month, 1)
        current = date(ref.year, ref.month, 1)
        if which == "this":
            start = this_one
        elif which == "next":
            start = this_one if this_one > current else date(ref.year + 1, month, 1)
        elif which == "last":  # strictly before the current month
            start = this_one if this_one < current else date(ref.year - 1, month, 1)
        else:  # "in October": the latest one begun
            start = this_one if this_one <= ref else date(ref.year - 1, month, 1)
        return _month(start.year, start.month)

    start = m.start("mod") if m["mod"] else m.start("month")
    return _Hit(start, m.end(), resolve, anchorable=True)


def _relative_day(offset: int) -> Callable[[re.Match[str]], _Hit]:
    return lambda m: _Hit(m.start(), m.end(), lambda ref: _day(ref - timedelta(days=offset)))


def _ago(m: re.Match[str]) -> _Hit | None:
    n, unit = _number(m["n"]), m["unit"].lower()
    return _Hit(m.start(), m.end(), lambda ref: _unit_around(_back(ref, n, unit), unit))


def _trailing(m: re.Match[str]) -> _Hit | None:
    # "in the past 3 days": up to and including the reference day.
    n, unit = _number(m["n"]), m["unit"].lower()
    return _Hit(m.start(), m.end(), lambda ref: (_back(ref, n, unit), ref + timedelta(days=1)))


def _this_unit(m: re.Match[str]) -> _Hit | None:
    which, unit = m["which"].lower(), m["unit"].lower()
    step = {"last": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}.get(which)

    def resolve(ref: date) -> _Span:
        if unit == "weekend":
            return _weekend_near(ref, which)
        if step is None:  # "the past month": trailing, ending with the reference day
            return _back(ref, 1, unit), ref + timedelta(days=1)
        if unit == "week":
            return _week(ref + timedelta(days=7 * step))
        if unit == "month":
            d = _add_months(ref, step)
            return _month(d.year, d.month)
        return _year(ref.year + step)

    return _Hit(m.start(), m.end(), resolve)


def _weekend_near(ref: date, which: str) -> _Span:
    saturday = _weekday_on_or_before(ref, 5)
    if which in ("last", "past", "previous"):  # the latest one over by the reference day
        return _weekend(
            saturday if saturday + timedelta(days=2) <= ref else saturday - timedelta(7)
        )
    if which in ("next", "coming"):
        return _weekend(saturday + timedelta(days=7))
    if which == "this":
        return _weekend(_week(ref)[0] + timedelta(days=5))
    return _weekend(saturday)  # "over the weekend": the latest one begun


def _the_weekend(m: re.Match[str]) -> _Hit | None:
    return _Hit(m.start(), m.end(), lambda ref: _weekend_near(ref, ""))


def _weekday(m: re.Match[str]) -> _Hit | None:
    weekday = _WEEKDAYS.index(m["weekday"].lower())
    which = (m["which"] or "").lower()

    def resolve(ref: date) -> _Span:
        latest = _weekday_on_or_before(ref, weekday)
        if which in ("last", "past", "previous"):
            return _day(latest if latest < ref else latest - timedelta(days=7))
        if which in ("next", "coming"):
            return _day(latest + timedelta(days=7))
        if which == "this":
            return _day(_week(ref)[0] + timedelta(days=weekday))
        return _day(latest)  # "on Monday": the latest one, today included

    return _Hit(m.start(), m.end(), resolve)


def _season_alone(m: re.Match[str]) -> _Hit | None:
    name, which = m["season"].lower(), (m["which"] or "").lower()

    def resolve(ref: date) -> _Span:
        label = ref.year + 1  # a winter is labelled by its January
        while _season(name, label)[0] > ref:
            label -= 1
        begun = _season(name, label)  # the latest one begun
        if which in ("last", "past", "previous"):  # the latest one over
            return begun if begun[1] <= ref else _season(name, label - 1)
        if which in ("next", "coming"):
            return _season(name, label + 1)
        if which == "this":
            return _season(name, ref.year + 1 if name == "winter" and ref.month > 2 else ref.year)
        return begun

    return _Hit(m.start(), m.end(), resolve)


_Matcher = tuple[re.Pattern[str], Callable[[re.Match[str]], _Hit | None]]

# In priority order: a later pattern cannot claim text an earlier one took.
_ABSOLUTE: list[_Matcher] = [
    (re.compile(r"\b(?P<year>(?:19|20)\d\d)[-/.](?P<mon>\d{1,2})[-/.](?P<day>\d{1,2})\b"), _iso),
    (re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mon>0[1-9]|1[0-2])\b(?![-/.]\d)"), _iso_month),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:{_YEAR_SEP}{_YEAR})?", _F), _month_day),
    (re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_DAY}(?:{_YEAR_SEP}{_YEAR})?", _F), _month_day),
    (re.compile(rf"\b{_MONTH}{_YEAR_SEP}(?:of\s+)?{_YEAR}", _F), _month_year),
    (
        re.compile(rf"\b(?P<season>summer|winter|spring|autumn|fall)(?:\s+of)?\s+{_YEAR}", _F),
        _season_year,
    ),
    (re.compile(r"\b(?:the\s+)?(?P<decade>(?:19|20)\d0)'?s\b", _F), _decade),
    # A bare month or year needs a word that makes it one: "in May", not "May I".
    (
        re.compile(
            r"\b(?:(?P<mod>last|this|next|early|mid|late)(?:\s+|-)"
            r"|(?:in|during|since|until|till|by|of|from|through|throughout|before|after|around)\s+)"
            rf"(?:the\s+month\s+of\s+)?{_MONTH}",
            _F,
        ),
        _month_alone,
    ),
    (
        re.compile(
            r"(?:^|\b(?:in|during|since|of|by|from|until|till|to|before|after|around|circa"
            rf"|early|mid|late|the|and|or|year)(?:\s+|-)){_YEAR}(?![.,:]\d|%)",
            _F,
        ),
        _bare_year,
    ),
]

_RELATIVE: list[_Matcher] = [
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", _F), _relative_day(2)),
    (re.compile(r"\byesterday\b", _F), _relative_day(1)),
    (
        re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b", _F),
        _relative_day(0),
    ),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}s?\s+ago\b", _F), _ago),
    (re.compile(rf"\b(?:the\s+)?(?:past|last)\s+{_NUM}\s+{_UNIT}s\b", _F), _trailing),
    (
        re.compile(
            r"\b(?P<which>last|this|next|past|previous|coming)\s+(?P<unit>weekend|week|month|year)\b",
            _F,
        ),
        _this_unit,
    ),
    (re.compile(r"\b(?:over|on|at|during)\s+the\s+weekend\b", _F), _the_weekend),
    (
        re.compile(
            rf"\b(?:(?P<which>last|this|next|past|previous|coming)\s+)?(?P<weekday>{_WEEKDAY})\b",
            _F,
        ),
        _weekday,
    ),
    (
        re.compile(
            r"\b(?:(?P<which>last|this|next|past|previous|coming)\s+"
            r"|(?:in|during|over|through|throughout)\s+(?:the\s+)?)"
            r"(?P<season>summer|winter|spring|autumn|fall)\b",
            _F,
        ),
        _season_alone,
    ),
]

# "two weeks before", "the weekend before", "the Sunday after": just before an absolute date.
_ANCHORED = re.compile(
    rf"(?:\b(?:the|that|last|a)\s+)?(?:{_NUM}\s+{_UNIT}s?"
    rf"|\b(?P<span>day|weekend|week|month|year|{_WEEKDAY}))"
    r"\s+(?P<dir>before|after|prior\s+to)\s+$",
    _F,
)
_BETWEEN = re.compile(r"\b(?:between|from)\s+$", _F)
_AND = re.compile(r"\s*(?:and|to|until|till|through|-|\u2013)\s*", _F)
_SINCE = re.compile(r"\bsince\s+$", _F)
# Shown with the range ("in October") but not part of it.
_LEAD_WORD = re.compile(
    r"\b(?:on|in|during|since|by|from|of|until|till|around|between|as\s+of)\s+$", _F
)
# ... unless the range's own words already say how it relates ("last weekend").
_OWN_LEAD = re.compile(r"(?:the|that|last|this|next|past|previous|coming)\b", _F)


def _anchored(m: re.Match[str], anchor: _Resolve) -> _Resolve:
    before = m["dir"].lower() != "after"
    span_word = (m["span"] or "").lower()
    n, unit = (_number(m["n"]), m["unit"].lower()) if m["n"] else (0, "")

    def resolve(ref: date) -> _Span | None:
        base = anchor(ref)
        if base is None:
            return None
        first, after = base[0], base[1]
        if unit:  # "two weeks before": a fuzzy point that far from the anchor
            return _unit_around(
                _back(first if before else after - timedelta(days=1), n if before else -n, unit),
                unit,
            )
        if span_word == "day":
            return _day(first - timedelta(days=1)) if before else _day(after)
        if span_word == "weekend":
            if before:  # the latest weekend over by the anchor
                return _weekend_near(first, "last")
            return _weekend(after + timedelta(days=(5 - after.weekday()) % 7))
        if span_word in _WEEKDAYS:
            weekday = _WEEKDAYS.index(span_word)
            if before:
                return _day(_weekday_on_or_before(first - timedelta(days=1), weekday))
            return _day(after + timedelta(days=(weekday - after.weekday()) % 7))
        step = {"week": None, "month": 1, "year": 12}[span_word]
        if step is None:
            return (first - timedelta(days=7), first) if before else (after, after + timedelta(7))
        return (_add_months(first, -step), first) if before else (after, _add_months(after, step))

    return resolve


def _collect(text: str, matchers: list[_Matcher], taken: bytearray, hits: list[_Hit]) -> None:
    for pattern, make in matchers:
        for m in pattern.finditer(text):
            hit = make(m)
            if hit is None or any(taken[hit.start : hit.end]):
                continue
            taken[hit.start : hit.end] = b"\x01" * (hit.end - hit.start)
            hits.append(hit)


def _anchor_offsets(text: str, hits: list[_Hit], taken: bytearray) -> None:
    """Turns "<offset> before|after <absolute date>" into the window it names."""
    for hit in hits:
        if not hit.anchorable:
            continue
        m = _ANCHORED.search(text, max(0, hit.start - 60), hit.start)
        if m is None or any(taken[m.start() : hit.start]):
            continue
        taken[m.start() : hit.start] = b"\x01" * (hit.start - m.start())
        hit.start, hit.resolve, hit.anchorable = m.start(), _anchored(m, hit.resolve), False


def _reference(hit: _Hit, hits: list[_Hit], today: date) -> date:
    """The nearest full date the query names, else today."""
    dated = [h for h in hits if h.day is not None]
    if not dated:
        return today
    nearest = min(dated, key=lambda h: min(abs(h.start - hit.end), abs(hit.start - h.end)))
    return nearest.day or today


def _plausible(span: _Span) -> bool:
    return span[0].year >= _MIN_YEAR and span[1] <= date(_MAX_YEAR + 1, 1, 1)


@lru_cache(maxsize=4096)
def _resolved(text: str, today: date) -> tuple[DateRange, ...]:
    if not _PRECHECK.search(text):
        return ()
    taken = bytearray(len(text))
    hits: list[_Hit] = []
    _collect(text, _ABSOLUTE, taken, hits)
    _anchor_offsets(text, hits, taken)
    _collect(text, _RELATIVE, taken, hits)
    if not hits:
        return _fallback(text, today, taken)
    hits.sort(key=lambda h: h.start)
    spans: list[tuple[int, int, _Span]] = []
    for hit in hits:
        span = hit.resolve(_reference(hit, hits, today))
        if span is None or not _plausible(span):
            continue
        if _SINCE.search(text, 0, hit.start):
            span = (span[0], max(span[1], today + timedelta(days=1)))
        previous = spans[-1] if spans else None
        if (
            previous
            and _AND.fullmatch(text, previous[1], hit.start)
            and _BETWEEN.search(text, 0, previous[0])
        ):  # "between August 11 and August 15 2023": one range
            spans[-1] = (previous[0], hit.end, (previous[2][0], max(previous[2][1], span[1])))
            continue
        spans.append((hit.start, hit.end, span))
    return _ranges(text, spans)


def _ranges(text: str, spans: list[tuple[int, int, _Span]]) -> tuple[DateRange, ...]:
    out: dict[_Span, DateRange] = {}
    for start, end, span in spans:
        own = _OWN_LEAD.match(text, start)
        lead = None if own else _LEAD_WORD.search(text, max(0, start - 12), start)
        shown = text[lead.start() if lead else start : end].strip(" ,.?!")
        out.setdefault(span, DateRange(_midnight(span[0]), _midnight(span[1]), shown))
    return tuple(out.values())


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(), UTC)


_FALLBACK_GATE = re.compile(r"\d|fortnight", _F)
_FALLBACK_MONTH = re.compile(_MONTH, _F)
_NUMERIC_DATE = re.compile(r"\d[/.-]\d")


def _fallback(text: str, today: date, taken: bytearray) -> tuple[DateRange, ...]:
    """dateparser, for day formats the grammar does not know ("5/8/2023", "May the 8th").

    Called only when the grammar found nothing and digits remain; it costs
    1-3 ms a call (~0.2 s the first time, loading its language data). An answer
    counts only if its words name a day: dateparser also reads "18th" or
    "a second" as dates.
    """
    residue = "".join(c if not t else " " for c, t in zip(text, taken, strict=True))
    if not _FALLBACK_GATE.search(residue):
        return ()
    from dateparser.search import search_dates  # slow to import; rarely needed

    found = search_dates(
        text,
        languages=["en"],
        settings={
            "RELATIVE_BASE": datetime.combine(today, time(12)),
            "PREFER_DATES_FROM": "past",
            "RETURN_AS_TIMEZONE_AWARE": True,
            "TIMEZONE": "UTC",
            "TO_TIMEZONE": "UTC",
        },
    )
    spans = []
    for words, when in found or []:
        names_day = re.search(r"\d", words) and (
            _FALLBACK_MONTH.search(words) or _NUMERIC_DATE.search(words)
        )
        span = _day(when.date())
        if names_day and _plausible(span):
            start = text.find(words)
            spans.append((start, start + len(words), span))
    return _ranges(text, spans)


def warm_up() -> None:
    """Loads dateparser now (~0.3 s) rather than in the first recall that needs it."""
    _resolved.__wrapped__("on 5/8/2023", date(2023, 5, 9))


def _as_utc(moment: datetime) -> datetime:
    # Naive datetimes are UTC, as everywhere in spaceduck.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def query_dates(text: str, now: datetime) -> list[DateRange]:
    """The date ranges ``text`` names, resolved as asked at ``now``; [] for none."""
    return list(_resolved(text, _as_utc(now).date()))


def date_match(
    ranges: Sequence[DateRange], occurred_at: datetime | None, *, slack: timedelta = DEFAULT_SLACK
) -> float:
    """1.0 when occurred_at is inside a range, falling off linearly to 0 at `slack` outside it;
    0 without ranges or occurred_at."""
    if not ranges or occurred_at is None:
        return 0.0
    at = _as_utc(occurred_at)
    best = 0.0
    for r in ranges:
        start, end = _as_utc(r.start), _as_utc(r.end)
        if start <= at < end:
            return 1.0
        if slack > timedelta(0):
            gap = start - at if at < start else at - end
            best = max(best, 1.0 - gap / slack)
    return best
