"""What every dashboard page shows in its navigation."""

from __future__ import annotations

from django.http import HttpRequest

from memories.selectors import memory_review_count


def review_counts(request: HttpRequest) -> dict[str, object]:
    """Candidates waiting for a person (staff pages only; one indexed count)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_active or not user.is_staff:
        return {}

    def count() -> str:
        counted, capped = memory_review_count()
        return f"{counted}+" if capped else str(counted) if counted else ""

    return {"memory_review_count": count}
