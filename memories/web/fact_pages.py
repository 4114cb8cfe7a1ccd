"""Read queries for the dashboard's fact pages: live facts a page at a time.

``memories.store.selectors.list_facts`` returns a whole namespace (what the API promises);
the dashboard pages by keyset on the unique (namespace, key) index instead, so a page
costs the same however many facts there are, across every namespace or within one.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import OuterRef, Subquery
from django.utils import timezone

from memories.models import Fact, FactEvent
from memories.store import selectors
from spaceduck.core.errors import InvalidInput

FACTS_PER_PAGE = 50
NAMESPACE_CHOICES = 100

# A row value, so SQLite seeks the unique (namespace, key) index to where the page
# starts; the equivalent OR of two comparisons reads every earlier entry first.
_AFTER_SQL = "(memories_fact.namespace, memories_fact.key) > (%s, %s)"


@dataclass(frozen=True)
class FactCursor:
    """The last (namespace, key) a page showed; encoded opaque, since keys hold anything."""

    namespace: str
    key: str

    def encode(self) -> str:
        raw = json.dumps([self.namespace, self.key], ensure_ascii=False).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, raw: str) -> FactCursor:
        try:
            data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        except (binascii.Error, ValueError):
            data = None
        well_formed = isinstance(data, list) and len(data) == 2
        if not (well_formed and all(isinstance(part, str) for part in data)):
            raise InvalidInput(f"page cursor {raw[:40]!r} is not one this page wrote")
        return cls(data[0], data[1])


@dataclass
class FactPage:
    facts: Sequence[Fact]
    next_cursor: FactCursor | None  # where the next page starts, None on the last page


def fact_page(
    *, namespace: str = "", after: FactCursor | None = None, size: int | None = None
) -> FactPage:
    """Up to ``size`` (default FACTS_PER_PAGE) live facts by namespace then key; one
    namespace when ``namespace`` is given (already canonical), strictly after ``after``."""
    size = FACTS_PER_PAGE if size is None else size
    now = timezone.now()
    # The same rule as selectors.get_fact/list_facts: expiry is checked on every
    # read, so an expired fact is gone from the page before the collector runs.
    facts = Fact.objects.filter(selectors.live_facts(now))
    if namespace:
        facts = facts.filter(namespace=namespace)
    if after is not None and after.namespace == namespace:
        facts = facts.filter(key__gt=after.key)  # seeks (namespace = ?, key > ?)
    elif after is not None:
        facts = facts.extra(where=[_AFTER_SQL], params=[after.namespace, after.key])
    # Who set each (its newest FactEvent): one seek of the fact_id index a row shown.
    last = FactEvent.objects.filter(fact_id=OuterRef("pk")).order_by("-id").values("actor")[:1]
    facts = facts.annotate(set_by=Subquery(last))
    rows = list(facts.order_by("namespace", "key")[: size + 1])
    shown = rows[:size]
    more = len(rows) > size
    return FactPage(
        facts=shown,
        next_cursor=FactCursor(shown[-1].namespace, shown[-1].key) if more else None,
    )


def fact_namespaces(*, limit: int = NAMESPACE_CHOICES) -> list[str]:
    """The first ``limit`` namespaces holding facts (expired ones included), in order."""
    return selectors.namespaces_of(Fact, limit=limit)
