"""What every dashboard page shows in its navigation."""

from __future__ import annotations

from django.http import HttpRequest

from notes.selectors import review_count


def review_counts(request: HttpRequest) -> dict[str, object]:
    """Pending notes waiting for a person (staff pages only)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_active or not user.is_staff:
        return {}
    return {"note_review_count": review_count}
