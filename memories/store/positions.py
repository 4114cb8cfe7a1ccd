"""Where a page starts in a newest-first list: one keyset position for every paged list
(the memory viewer, the extraction log and its API, the threads).

A position is a row's (timestamp, id), written ``<µs since 1970>-<id>``. A page starts
strictly after the last row seen, so page 50 costs what page 1 costs. Any well-formed
position is a place in that order (values beyond the last storable time or id are held
at it), so a client cannot turn a cursor into a 500; anything else is InvalidInput.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self

from django.db import connection
from django.db.models import Q

from memories.models import Thread
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import LATEST_DATETIME, MAX_SQL_INT

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST_MICROS = (LATEST_DATETIME - _EPOCH) // timedelta(microseconds=1)

# The API documents the numeric form (OpenAPI pattern); thread ids are text.
NUMERIC_PATTERN = r"^[0-9]{1,19}-[0-9]{1,19}$"


@dataclass(frozen=True)
class Position:
    """A row with an integer id: a memory, an extraction."""

    at: datetime
    id: int

    _shape: ClassVar[re.Pattern[str]] = re.compile(r"([0-9]{1,19})-([0-9]{1,19})", re.ASCII)

    def encode(self) -> str:
        return f"{(self.at - _EPOCH) // timedelta(microseconds=1)}-{self.id}"

    @classmethod
    def decode(cls, raw: str) -> Self:
        match = cls._shape.fullmatch(raw)
        if match is None:
            raise InvalidInput(f"page cursor {raw[:40]!r} is not one this service wrote")
        at = _EPOCH + timedelta(microseconds=min(int(match[1]), _LATEST_MICROS))
        return cls(at, cls._id(match[2]))

    @staticmethod
    def _id(raw: str) -> Any:
        return min(int(raw), MAX_SQL_INT)

    @classmethod
    def of(cls, row: Any, column: str) -> Self:
        """Where ``row`` stands in (``column``, id) order."""
        return cls(getattr(row, column), row.pk)

    def older(self, column: str) -> Q:
        """Rows strictly after this one in newest-first (``column``, id) order."""
        return Q(**{f"{column}__lt": self.at}) | Q(**{column: self.at, "id__lt": self.id})

    def newer(self, column: str) -> Q:
        """Rows strictly before this one in newest-first (``column``, id) order."""
        return Q(**{f"{column}__gt": self.at}) | Q(**{column: self.at, "id__gt": self.id})

    def sql_params(self) -> list[object]:
        """(timestamp, id) as the database stores them, for hand-written SQL."""
        return [connection.ops.adapt_datetimefield_value(self.at), self.id]


@dataclass(frozen=True)
class TextPosition(Position):
    """A row with a text id (a thread): any printable id up to the column's length."""

    id: str  # type: ignore[assignment]

    _shape: ClassVar[re.Pattern[str]] = re.compile(
        rf"([0-9]{{1,19}})-([^\x00-\x1f\x7f]{{1,{Thread._meta.get_field('id').max_length}}})"
    )

    @staticmethod
    def _id(raw: str) -> Any:
        return raw
