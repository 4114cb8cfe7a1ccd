"""Migration operations that touch the database of one vendor only.

The SQLite file and PostgreSQL hold the same tables but different search objects:
FTS5 and vec0 virtual tables with SQLite triggers on one side, tsvector/pgvector
columns, plpgsql triggers and their indexes on the other. Each migration that creates
such objects wraps its raw SQL in ``OnlyOn`` (``sqlite_only`` / ``postgresql_only``),
so one migration history serves both databases and each runs only its own half.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.migrations.operations.base import Operation

# Only operations without a model-state change: the wrapped ones share one
# from_state/to_state pair, which is right only when none of them changes the state.
_STATELESS = (migrations.RunSQL, migrations.RunPython)


class OnlyOn(Operation):
    """Runs ``operations`` (RunSQL / RunPython) on the ``vendor`` database only."""

    reduces_to_sql = False

    def __init__(self, vendor: str, *operations: Operation) -> None:
        if not all(isinstance(operation, _STATELESS) for operation in operations):
            raise TypeError("OnlyOn wraps RunSQL and RunPython operations only")
        self.vendor = vendor
        self.operations = list(operations)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return self.__class__.__qualname__, [self.vendor, *self.operations], {}

    @property
    def reversible(self) -> bool:  # type: ignore[override]
        return all(operation.reversible for operation in self.operations)

    def state_forwards(self, app_label: str, state: Any) -> None:
        for operation in self.operations:
            operation.state_forwards(app_label, state)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor == self.vendor:
            for operation in self.operations:
                operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor == self.vendor:
            for operation in reversed(self.operations):
                operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        parts = "; ".join(operation.describe() for operation in self.operations)
        return f"On {self.vendor} only: {parts}"


def sqlite_only(*operations: Operation) -> OnlyOn:
    return OnlyOn("sqlite", *operations)


def postgresql_only(*operations: Operation) -> OnlyOn:
    return OnlyOn("postgresql", *operations)
