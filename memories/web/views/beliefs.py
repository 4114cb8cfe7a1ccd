"""A belief's timeline (``/beliefs/?namespace=&subject=&attribute=``): the values one claim
had over time, with dates, sources and who decided each change (``memories.store.timeline``).

A holder or attribute may hold any character, so they travel as query fields.
"""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.store import selectors, timeline
from spaceduck.core.errors import InvalidInput
from spaceduck.core.pages import error_response

PAGE = "memories/belief.html"
MAX_PART = 255  # the claim columns' length


def _claim(request: HttpRequest) -> timeline.Claim:
    """The claim the query names, or InvalidInput saying what is missing."""
    data = request.GET
    namespace = data.get("namespace", "").strip()
    subject, attribute = data.get("subject", "").strip(), data.get("attribute", "").strip()
    if not namespace:
        raise InvalidInput("namespace is required (like 'user:alice')")
    if not attribute:
        raise InvalidInput("attribute is required (like 'lives_in')")
    if len(subject) > MAX_PART or len(attribute) > MAX_PART:
        raise InvalidInput(f"subject and attribute are at most {MAX_PART} characters")
    return timeline.Claim(selectors.clean_namespace(namespace), subject, attribute)


@staff_member_required
@require_GET
def claim_page(request: HttpRequest) -> HttpResponse:
    """What we believed when about one holder and attribute."""
    try:
        claim = _claim(request)
    except InvalidInput as error:
        return error_response(request, str(error), 400)
    found = timeline.claim_timeline(claim)
    template = PAGE + "#belief" if request.htmx else PAGE  # type: ignore[attr-defined]
    status = 200 if found.beliefs else 404
    return render(request, template, {"timeline": found}, status=status)
