"""The one keyset position every paged list uses (viewer, extraction log and API, threads)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.store.positions import Position, TextPosition
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import LATEST_DATETIME, MAX_SQL_INT

AT = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize("position", [Position(AT, 42), TextPosition(AT, "thread:a-b c")])
def test_a_position_reads_back_what_it_wrote(position: Position) -> None:
    assert type(position).decode(position.encode()) == position


def test_values_beyond_what_the_database_stores_are_held_at_the_last_place() -> None:
    position = Position.decode(f"{'9' * 19}-{'9' * 19}")
    assert (position.at, position.id) == (LATEST_DATETIME, MAX_SQL_INT)


@pytest.mark.parametrize(
    "raw", ["", "-", "12", "12-", "-3", "1-2-3", "a-1", "1-a", "1.5-2", f"{'1' * 20}-1", "\u0661-1"]
)
def test_anything_else_is_invalid_input_not_a_crash(raw: str) -> None:
    with pytest.raises(InvalidInput, match="not one this service wrote"):
        Position.decode(raw)


@pytest.mark.parametrize("raw", ["1-", "1-a\nb", "1-" + "x" * 65, "x-abc"])
def test_a_thread_position_takes_printable_ids_up_to_the_column_length(raw: str) -> None:
    with pytest.raises(InvalidInput):
        TextPosition.decode(raw)
    assert TextPosition.decode("1-" + "x" * 64).id == "x" * 64
