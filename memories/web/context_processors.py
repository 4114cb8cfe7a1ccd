"""What every dashboard page shows in its navigation."""

from __future__ import annotations

from django.http import HttpRequest

from memories.store.selectors import memory_review_count
from memories.write.conflicts import pending_count
from spaceduck.core import runtime


def review_counts(request: HttpRequest) -> dict[str, object]:
    """Candidates and conflicts waiting for a person (staff pages only; an indexed count each,
    made only when a page shows it)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_active or not user.is_staff:
        return {}

    def count() -> str:
        return _shown(*memory_review_count())

    def conflicts() -> str:
        return _shown(*pending_count())

    return {
        "memory_review_count": count,
        "memory_conflict_count": conflicts,
        "memory_off": lambda: not runtime.memory_enabled(),
    }


def _shown(counted: int, capped: bool) -> str:
    return f"{counted}+" if capped else str(counted) if counted else ""
