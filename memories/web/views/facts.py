"""The facts pages: live facts by namespace, editing one, and deleting one after confirming.

A fact key may contain "/" (and anything else but control characters), so the namespace
and key travel as query or form fields, never in the path. Editing goes through
``services.set_fact`` and deleting through ``services.delete_fact``: the services
``PUT`` and ``DELETE /api/facts/{namespace}/{key}`` call (both recorded).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from memories.models import Fact
from memories.store import selectors
from memories.web import fact_pages
from memories.web.forms import FactEditForm
from memories.write import services
from spaceduck.core.errors import InvalidInput, ServiceError
from spaceduck.core.pages import back_to, error_response, staff_actor

LIST = "memories/facts.html"
CONFIRM = "memories/fact_delete.html"
EDIT = "memories/fact_edit.html"


@dataclass
class FactRow:
    """A fact as the page shows it."""

    fact: Fact
    value: str  # pretty-printed JSON
    provenance: list[tuple[str, str]]  # what the writer recorded, each value as JSON text
    dom_id: str  # the row's element id (keys may hold any character, so a digest)
    delete_url: str
    edit_url: str


def _dom_id(namespace: str, key: str) -> str:
    digest = hashlib.sha256(f"{namespace}\n{key}".encode()).hexdigest()[:16]
    return f"fact-{digest}"


def _json(value: Any, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=False)


def _delete_url(namespace: str, key: str, back: str = "") -> str:
    return reverse("memories:fact-delete") + _fact_query(namespace, key, back)


def _fact_query(namespace: str, key: str, back: str) -> str:
    """A fact's fields, and ``next``: the list page the link was on, which the edit page and
    the confirmation go back to (the same filter and page, or none)."""
    query = {"namespace": namespace, "key": key} | ({"next": back} if back else {})
    return "?" + urlencode(query)


def _list_url(namespace: str = "") -> str:
    query = "?" + urlencode({"namespace": namespace}) if namespace else ""
    return reverse("memories:facts") + query


def _row(fact: Fact, back: str = "") -> FactRow:
    """``back``: the list page the row is on (its links come back to it)."""
    provenance = fact.provenance if isinstance(fact.provenance, dict) else {}
    return FactRow(
        fact=fact,
        value=_json(fact.value),
        provenance=[
            (name, value if isinstance(value, str) else _json(value, None))
            for name, value in provenance.items()
        ],
        dom_id=_dom_id(fact.namespace, fact.key),
        delete_url=_delete_url(fact.namespace, fact.key, back),
        edit_url=_edit_url(fact.namespace, fact.key, back),
    )


def _edit_url(namespace: str, key: str, back: str = "") -> str:
    return reverse("memories:fact-edit") + _fact_query(namespace, key, back)


# --- The list ------------------------------------------------------------------------


@staff_member_required
@require_GET
def fact_list(request: HttpRequest) -> HttpResponse:
    """Live facts, one namespace (``namespace``) or all, a page at a time (``after``)."""
    raw_namespace = request.GET.get("namespace", "").strip()
    context: dict[str, Any] = {"namespace_input": raw_namespace, "namespace": ""}
    errors: list[str] = []
    try:
        context["namespace"] = selectors.clean_namespace(raw_namespace) if raw_namespace else ""
    except InvalidInput as error:
        errors.append(f"namespace: {error}")
    after = None
    if request.GET.get("after"):
        try:
            after = fact_pages.FactCursor.decode(request.GET["after"])
        except InvalidInput as error:
            errors.append(f"after: {error}")
    status = 400 if errors else 200
    if errors:
        context["errors"] = errors
    else:
        page = fact_pages.fact_page(namespace=context["namespace"], after=after)
        here = request.get_full_path()  # htmx: the filter's or pager's URL, as pushed
        context["rows"] = [_row(fact, here) for fact in page.facts]
        context["first_page"] = after is None
        if page.next_cursor is not None:
            context["next_query"] = _page_query(request.GET, page.next_cursor.encode())
        context["first_query"] = _page_query(request.GET, None)
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, LIST + "#fact-list", context, status=status)
    context["namespaces"] = fact_pages.fact_namespaces()
    return render(request, LIST, context, status=status)


def _page_query(query: QueryDict, after: str | None) -> str:
    params = query.copy()
    params.pop("after", None)
    if after is not None:
        params["after"] = after
    return params.urlencode()


# --- Delete, after confirming --------------------------------------------------------


def _fact_fields(data: QueryDict) -> tuple[str, str]:
    """The canonical namespace and the key, or InvalidInput saying what is wrong."""
    namespace, key = data.get("namespace", ""), data.get("key", "")
    if not namespace:
        raise InvalidInput("namespace is required (like 'user:alice')")
    if not key:
        raise InvalidInput("key is required")
    return selectors.clean_namespace(namespace), selectors.clean_fact_key(key)


@staff_member_required
@require_http_methods(["GET", "POST"])
def fact_delete(request: HttpRequest) -> HttpResponse:
    """GET asks for confirmation; POST deletes and goes back to the list (htmx: the row
    goes, a message says so)."""
    data = request.POST if request.method == "POST" else request.GET
    try:
        namespace, key = _fact_fields(data)
    except InvalidInput as error:
        return error_response(request, str(error), 400)
    context: dict[str, Any] = {
        "namespace": namespace,
        "key": key,
        "dom_id": _dom_id(namespace, key),
        "delete_url": _delete_url(namespace, key),
        "back": back_to(request, _list_url(namespace)),
        "inline": bool(request.htmx),  # type: ignore[attr-defined]
    }
    if request.method == "GET":
        fact = selectors.get_fact(namespace, key)
        context["row"] = _row(fact, context["back"]) if fact is not None else None
        if request.htmx:  # type: ignore[attr-defined]
            template = CONFIRM + ("#confirm" if fact is not None else "#missing")
        else:
            template = CONFIRM
        return render(request, template, context, status=200 if fact is not None else 404)
    if not services.delete_fact(namespace, key, actor=staff_actor(request)):
        # Already gone (deleted elsewhere, or collected after it expired): say so; with
        # htmx the stale row goes too and the message comes as a flash.
        if request.htmx:  # type: ignore[attr-defined]
            messages.warning(request, f"Fact {key!r} in {namespace} was already gone.")
            return render(request, CONFIRM + "#deleted", context, status=404)
        return render(request, CONFIRM, context, status=404)
    messages.success(request, f"Fact {key!r} deleted from {namespace}.")
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, CONFIRM + "#deleted", context)
    return HttpResponseRedirect(context["back"])


# --- Edit -------------------------------------------------------------------------------


@staff_member_required
@require_http_methods(["GET", "POST"])
def fact_edit(request: HttpRequest) -> HttpResponse:
    """GET: the form (htmx: inline in the fact's row); POST: saved through set_fact (as PUT
    does, recorded), then the list (htmx: the row again). Bad JSON, a TTL out of range or a
    value the service refuses: the form again with the message, 400/422."""
    data = request.POST if request.method == "POST" else request.GET
    try:
        namespace, key = _fact_fields(data)
    except InvalidInput as error:
        return error_response(request, str(error), 400)
    fact = selectors.get_fact(namespace, key)
    if fact is None:
        return error_response(request, f"fact {key!r} not found in {namespace} (or expired)", 404)
    if request.method == "GET":
        initial = {"value": _json(fact.value), "ttl_ms": fact.ttl_ms}
        return _edit_form(request, fact, FactEditForm(initial=initial, auto_id=_ids(fact)))
    form = FactEditForm(request.POST, auto_id=_ids(fact))
    if not form.is_valid():
        return _edit_form(request, fact, form, status=400)
    try:
        fact = services.set_fact(
            namespace,
            key,
            form.cleaned_data["value"],
            ttl_ms=form.cleaned_data["ttl_ms"],
            actor=staff_actor(request),
        )
    except ServiceError as error:
        form.add_error(None, str(error))
        return _edit_form(request, fact, form, status=error.status_code)
    messages.success(request, f"Fact {key!r} in {namespace} saved.")
    if request.htmx:  # type: ignore[attr-defined]
        fact.set_by = staff_actor(request)  # type: ignore[attr-defined]  # as the list shows it
        row = _row(fact, back_to(request, ""))
        # The focus on the saved row's Edit link (autofocus: htmx focuses it after the swap),
        # not lost to <body> with the form that had it.
        response = render(request, EDIT + "#saved", {"row": row, "focus_edit": True})
        response["HX-Retarget"] = f"#{row.dom_id}"  # the whole row, with its new value
        response["HX-Reswap"] = "outerHTML"
        return response
    return HttpResponseRedirect(back_to(request, _list_url(namespace)))


def _ids(fact: Fact) -> str:
    """Field ids of the fact's own form: a page may show several inline."""
    return f"{_dom_id(fact.namespace, fact.key)}-%s"


def _edit_form(
    request: HttpRequest, fact: Fact, form: FactEditForm, status: int = 200
) -> HttpResponse:
    back = back_to(request, _list_url(fact.namespace))
    # The focus in the form (htmx focuses an autofocus field it swaps in): its first field
    # with an error, else its first field.
    wrong = [name for name in form.fields if name in form.errors]
    form.fields[(wrong or list(form.fields))[0]].widget.attrs["autofocus"] = True
    context = {
        "row": _row(fact, back),
        "form": form,
        "back": back,
        "inline": bool(request.htmx),  # type: ignore[attr-defined]
    }
    template = EDIT + "#edit-form" if request.htmx else EDIT  # type: ignore[attr-defined]
    return render(request, template, context, status=status)
