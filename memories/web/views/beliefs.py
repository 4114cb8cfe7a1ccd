"""What we believed when, at ``/beliefs/``: a form to pick a namespace (with the namespaces
that hold a claim), a namespace's claims (``?namespace=``, of one holder with ``subject``:
each claim's newest value, how many times it changed, when, linked to its timeline), and a
claim's timeline (``?namespace=&subject=&attribute=``: the values it had over time, with
dates, sources and who decided each change; ``memories.store.timeline``).

A holder or attribute may hold any character, so they travel as query fields.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.store import selectors, timeline
from spaceduck.core.errors import InvalidInput
from spaceduck.core.limits import check_length
from spaceduck.core.pages import error_response

PAGE = "memories/belief.html"
CLAIMS = "memories/beliefs.html"
MAX_PART = 255  # the claim columns' length


def _part(value: str, name: str) -> str:
    """A holder or attribute of the query, refused in the words every limit uses."""
    return check_length(value, field=name, limit=MAX_PART)


def _claim(namespace: str, subject: str, attribute: str) -> timeline.Claim:
    """The claim the query names, or InvalidInput saying what is wrong."""
    if not attribute:
        raise InvalidInput("attribute is required (like 'location')")
    return timeline.Claim(namespace, _part(subject, "subject"), _part(attribute, "attribute"))


@staff_member_required
@require_GET
def claim_page(request: HttpRequest) -> HttpResponse:
    """No namespace: pick one. A namespace: its claims. An attribute too: its timeline."""
    data = request.GET
    namespace = data.get("namespace", "").strip()
    subject, attribute = data.get("subject", "").strip(), data.get("attribute", "").strip()
    try:
        if namespace:
            namespace = selectors.clean_namespace(namespace)
        if namespace and attribute:
            return _timeline(request, _claim(namespace, subject, attribute))
        return _claims(request, namespace, subject)
    except InvalidInput as error:
        return error_response(request, str(error), 400)


def _timeline(request: HttpRequest, claim: timeline.Claim) -> HttpResponse:
    found = timeline.claim_timeline(claim)
    template = PAGE + "#belief" if request.htmx else PAGE  # type: ignore[attr-defined]
    status = 200 if found.beliefs else 404
    return render(request, template, {"timeline": found}, status=status)


def _claims(request: HttpRequest, namespace: str, subject: str) -> HttpResponse:
    """The namespace's claims a page at a time (``after_subject``/``after_attribute``: the
    last claim of the page before), or the namespaces to pick from."""
    context: dict[str, Any] = {"namespace": namespace, "subject": subject}
    if namespace:
        after = None
        if "after_attribute" in request.GET:
            after = timeline.Claim(
                namespace,
                _part(request.GET.get("after_subject", ""), "after_subject"),
                _part(request.GET["after_attribute"], "after_attribute"),
            )
        page = timeline.claims_of(namespace, subject=subject or None, after=after)
        context |= {
            "page": page,
            "first_page": after is None,
            "base_query": _query(namespace, subject),
        }
        if page.more is not None:
            more = {"after_subject": page.more.subject, "after_attribute": page.more.attribute}
            context["next_query"] = _query(namespace, subject, more)
    if not namespace or not request.htmx:  # type: ignore[attr-defined]  # the list, the datalist
        context["namespaces"], context["more_namespaces"] = timeline.claim_namespaces()
    template = CLAIMS + "#claims" if request.htmx else CLAIMS  # type: ignore[attr-defined]
    return render(request, template, context)


def _query(namespace: str, subject: str, more: dict[str, str] | None = None) -> str:
    fields = {"namespace": namespace} | ({"subject": subject} if subject else {})
    return urlencode(fields | (more or {}))
