"""Date ranges named in recall queries, resolved against a stopped clock, and date_match."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memories.recall.dates import DateRange, date_match, query_dates

# A Wednesday.
NOW = datetime(2023, 11, 15, 12, 0, tzinfo=UTC)


def spans(text: str, now: datetime = NOW) -> list[tuple[date, date]]:
    return [(r.start.date(), r.end.date()) for r in query_dates(text, now)]


def day(y: int, m: int, d: int) -> tuple[date, date]:
    return date(y, m, d), date(y, m, d) + timedelta(days=1)


def month(y: int, m: int) -> tuple[date, date]:
    return date(y, m, 1), date(y + m // 12, m % 12 + 1, 1)


def year(y: int) -> tuple[date, date]:
    return date(y, 1, 1), date(y + 1, 1, 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # absolute days
        ("What did Caroline do on 8 May 2023?", day(2023, 5, 8)),
        ("What happened May 8, 2023?", day(2023, 5, 8)),
        ("What happened on 2023-05-08?", day(2023, 5, 8)),
        ("What did Tim read on 8th December, 2023?", day(2023, 12, 8)),
        ("Where was the picture shared on December 1,2023 taken?", day(2023, 12, 1)),
        ("What did they give him on Aug 15th?", day(2023, 8, 15)),
        ("What did he do on Dec. 3rd?", day(2022, 12, 3)),  # not after now
        ("the 8th of May 2023", day(2023, 5, 8)),
        # months and years
        ("What did Melanie paint in June 2023?", month(2023, 6)),
        ("Was the first half of September 2022 good?", month(2022, 9)),
        ("What happened in 2023-05?", month(2023, 5)),
        ("What happened in 2022?", year(2022)),
        ("in 2022", year(2022)),
        ("How was mid-2022?", year(2022)),
        ("2021 was a good year", year(2021)),
        # a month without a year: the latest one not after now
        ("When did Caroline attend a parade in October?", month(2023, 10)),
        ("What did she do last October?", month(2023, 10)),
        ("What deal did John get in December?", month(2022, 12)),
        ("What happened in November?", month(2023, 11)),
        ("What is planned for next March?", month(2024, 3)),
        # relative to now
        ("What did Joanna write yesterday?", day(2023, 11, 14)),
        ("the day before yesterday", day(2023, 11, 13)),
        ("What did she do today?", day(2023, 11, 15)),
        ("3 days ago", day(2023, 11, 12)),
        ("What did she find last week?", (date(2023, 11, 6), date(2023, 11, 13))),
        ("this week", (date(2023, 11, 13), date(2023, 11, 20))),
        ("What happened last month?", month(2023, 10)),
        ("the trip next month", month(2023, 12)),
        ("last year", year(2022)),
        ("this year", year(2023)),
        ("in the past 3 days", (date(2023, 11, 12), date(2023, 11, 16))),
        # "two weeks ago" is a week around 1 November
        ("two weeks ago", (date(2023, 10, 29), date(2023, 11, 5))),
        ("a fortnight ago", (date(2023, 10, 29), date(2023, 11, 5))),
        ("2 months ago", month(2023, 9)),
        ("Where did Caroline move from 4 years ago?", year(2019)),
        ("What did she do last Friday?", day(2023, 11, 10)),
        ("on Monday", day(2023, 11, 13)),
        ("last Wednesday", day(2023, 11, 8)),
        ("What did he do last weekend?", (date(2023, 11, 11), date(2023, 11, 13))),
        ("over the weekend", (date(2023, 11, 11), date(2023, 11, 13))),
        # seasons, meteorological, northern; winter is labelled by its January
        ("What did they do last summer?", (date(2023, 6, 1), date(2023, 9, 1))),
        ("in the fall", (date(2023, 9, 1), date(2023, 12, 1))),
        ("last winter", (date(2022, 12, 1), date(2023, 3, 1))),
        ("this winter", (date(2023, 12, 1), date(2024, 3, 1))),
        ("What state did Joanna visit in summer 2021?", (date(2021, 6, 1), date(2021, 9, 1))),
        # offsets from an absolute date
        ("two weeks before 8 May 2023", (date(2023, 4, 21), date(2023, 4, 28))),
        ("3 days after May 8, 2023", day(2023, 5, 11)),
        ("the weekend before 8 May 2023", (date(2023, 5, 6), date(2023, 5, 8))),
        ("last weekend before April 10, 2023", (date(2023, 4, 8), date(2023, 4, 10))),
        ("the week before August 3, 2023", (date(2023, 7, 27), date(2023, 8, 3))),
        ("the Sunday before October 25, 2022", day(2022, 10, 23)),
        ("the day after 8 May 2023", day(2023, 5, 9)),
        ("the month before June 2023", month(2023, 5)),
        # spans
        ("between August 11 and August 15 2023", (date(2023, 8, 11), date(2023, 8, 16))),
        ("since March 2023", (date(2023, 3, 1), date(2023, 11, 16))),
        # decades: the decade
        ("the 1990s band", (date(1990, 1, 1), date(2000, 1, 1))),
        # dateparser's share: formats the grammar does not read
        ("What happened on 5/8/2023?", day(2023, 5, 8)),
    ],
)
def test_query_dates(text: str, expected: tuple[date, date]) -> None:
    assert spans(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "What does Caroline like?",
        "When did Melanie paint a sunrise?",  # "When" alone is not a date
        "May I ask what she likes?",
        "March on",
        "She may bring a spring roll",
        "Get a second opinion",
        "I saw 2 dogs",
        "I saw 2000 dogs",
        "100 people came",
        "in 1850",  # outside 1900-2100
        "How long ago was Caroline's 18th birthday?",
        "How many years has she worked there?",
        "Did she fall in love?",
        "What did she do after the road trip?",
        "What is her plan for this time?",
        "",
    ],
)
def test_no_dates(text: str) -> None:
    assert query_dates(text, NOW) == []


def test_a_full_date_is_when_relative_words_were_said() -> None:
    # LoCoMo asks "as mentioned on <date>": "last week" is the week before that date.
    assert spans("What was Tim's issue last week, as mentioned on November 6, 2023?") == [
        (date(2023, 10, 30), date(2023, 11, 6)),
        day(2023, 11, 6),
    ]
    assert spans("What did Joanna finish last Friday on 23 January, 2022?") == [
        day(2022, 1, 21),
        day(2022, 1, 23),
    ]


def test_ranges_are_aware_utc_and_keep_their_words() -> None:
    [found] = query_dates("When did Caroline attend a parade in October?", NOW)
    assert found == DateRange(
        datetime(2023, 10, 1, tzinfo=UTC), datetime(2023, 11, 1, tzinfo=UTC), "in October"
    )
    [found] = query_dates("What did she do last summer?", NOW)
    assert found.text == "last summer"


def test_several_dates_each_give_a_range() -> None:
    assert spans("in June 2022 or in 2023") == [month(2022, 6), year(2023)]


def test_now_may_be_naive_or_another_zone() -> None:
    assert spans("yesterday", datetime(2023, 11, 15, 12)) == [day(2023, 11, 14)]
    late_in_new_york = datetime(2023, 11, 15, 22, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert spans("yesterday", late_in_new_york) == [day(2023, 11, 15)]  # already the 16th in UTC


def test_the_clock_moves_relative_ranges() -> None:
    assert spans("in December", datetime(2024, 1, 3, tzinfo=UTC)) == [month(2023, 12)]
    # asked during the summer, "last summer" is the one before
    assert spans("last summer", datetime(2023, 7, 10, tzinfo=UTC)) == [
        (date(2022, 6, 1), date(2022, 9, 1))
    ]


OCTOBER = [DateRange(datetime(2023, 10, 1, tzinfo=UTC), datetime(2023, 11, 1, tzinfo=UTC), "")]


@pytest.mark.parametrize(
    ("occurred_at", "expected"),
    [
        (datetime(2023, 10, 1, tzinfo=UTC), 1.0),  # start is inclusive
        (datetime(2023, 10, 15, 8, 30, tzinfo=UTC), 1.0),
        (datetime(2023, 11, 1, tzinfo=UTC), 1.0),  # end is exclusive but 0 days outside
        (datetime(2023, 9, 30, 12, tzinfo=UTC), 0.5),  # half the slack before
        (datetime(2023, 11, 1, 12, tzinfo=UTC), 0.5),  # half the slack after
        (datetime(2023, 9, 30, tzinfo=UTC), 0.0),  # at slack
        (datetime(2023, 11, 2, tzinfo=UTC), 0.0),
        (datetime(2023, 6, 1, tzinfo=UTC), 0.0),  # far outside
        (datetime(2023, 10, 15), 1.0),  # naive is UTC
        (datetime(2023, 11, 1, 12), 0.5),
        (None, 0.0),
    ],
)
def test_date_match(occurred_at: datetime | None, expected: float) -> None:
    assert date_match(OCTOBER, occurred_at, slack=timedelta(days=1)) == pytest.approx(expected)


def test_date_match_without_ranges_and_by_default() -> None:
    assert date_match([], datetime(2023, 10, 15, tzinfo=UTC)) == 0.0
    # the default slack is a week
    assert date_match(OCTOBER, datetime(2023, 11, 4, 12, tzinfo=UTC)) == pytest.approx(0.5)
    # the nearest range counts; zero slack means inside or nothing
    ranges = [*OCTOBER, *query_dates("on 8 May 2023", NOW)]
    assert date_match(ranges, datetime(2023, 5, 8, 20, tzinfo=UTC)) == 1.0
    assert date_match(ranges, datetime(2023, 9, 30, tzinfo=UTC), slack=timedelta(0)) == 0.0
