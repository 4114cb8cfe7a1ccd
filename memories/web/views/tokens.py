"""Tokens (``/tokens/``): the API tokens with their grants, use and expiry; create one (its
secret shown once, in the answer to the POST that made it and nowhere else: not in a URL,
the session or a later page) and revoke one after confirming. Both go through
spaceduck.core.tokens, as ``manage.py token`` and the admin do, recorded as ``staff:<user>``."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods

from spaceduck.core.limits import MAX_SQL_INT, CountedForm
from spaceduck.core.pages import error_response, staff_actor
from spaceduck.core.tokens import (
    MAX_EXPIRY_DAYS,
    NAME_MAX,
    CreatedToken,
    InvalidTokenSpec,
    expiry_after,
    expiry_on,
    token_create,
    token_revoke,
)
from spaceduck.models import PERMISSIONS, ApiToken

PAGE = "memories/tokens.html"
CONFIRM = "memories/token_revoke.html"
GRANTS_MAX = 2000  # characters of the comma-separated grants; far more than a real list
# A create form is sent once: the session remembers the last forms used, so reloading the
# answer (the browser sends the POST again) makes no second token.
USED_FORMS = "tokens.used_forms"
USED_FORMS_KEPT = 50


class TokenCreateForm(CountedForm):
    name = forms.CharField(
        max_length=NAME_MAX, help_text="Who or what uses it, e.g. 'laptop agent'."
    )
    namespaces = forms.CharField(
        max_length=GRANTS_MAX,
        label="Namespaces",
        help_text="Comma-separated grants: user:alice, user:* (every user), * (everything).",
    )
    permissions = forms.MultipleChoiceField(
        choices=[(p, p) for p in PERMISSIONS],
        widget=forms.CheckboxSelectMultiple,
        initial=["read"],
        help_text="admin implies the others.",
    )
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_EXPIRY_DAYS, label="Expires in (days)"
    )
    expires_on = forms.DateField(
        required=False,
        label="or on",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="At 00:00 UTC that day. Neither: the token does not expire.",
    )
    once = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("expires_in_days") is not None and data.get("expires_on") is not None:
            raise forms.ValidationError("give the expiry in days or as a date, not both")
        return data

    def grants(self) -> list[str]:
        return [g.strip() for g in self.cleaned_data["namespaces"].split(",") if g.strip()]

    def expires_at(self) -> datetime | None:
        if self.cleaned_data["expires_in_days"] is not None:
            return expiry_after(self.cleaned_data["expires_in_days"])
        if self.cleaned_data["expires_on"] is not None:
            return expiry_on(self.cleaned_data["expires_on"])
        return None


def _blank_form() -> TokenCreateForm:
    return TokenCreateForm(initial={"once": secrets.token_urlsafe(16)})


TOKENS_PER_PAGE = 50


def _before(request: HttpRequest) -> int | None:
    """The ``before`` cursor of an older page; a malformed one shows the first page."""
    raw = request.GET.get("before", "")
    return int(raw) if raw.isdigit() and int(raw) <= MAX_SQL_INT else None


def _render(
    request: HttpRequest,
    form: TokenCreateForm,
    *,
    created: CreatedToken | None = None,
    status: int = 200,
) -> HttpResponse:
    before = _before(request)
    rows = ApiToken.objects.order_by("-id")
    if before is not None:
        rows = rows.filter(id__lt=before)
    # One page of tokens, newest first: a deployment with hundreds of agents would spend
    # ~0.25 ms a row rendering them all (65 ms at 200 in `bench pages`).
    tokens = list(rows[: TOKENS_PER_PAGE + 1])
    context = {
        "form": form,
        "tokens": tokens[:TOKENS_PER_PAGE],
        "older": tokens[TOKENS_PER_PAGE - 1].pk if len(tokens) > TOKENS_PER_PAGE else None,
        "first_page": before is None,
        "created": created,
    }
    partial = "#tokens-section" if request.htmx else ""  # type: ignore[attr-defined]
    response = render(request, PAGE + partial, context, status=status)
    add_never_cache_headers(response)  # a page with a secret must not come back from a cache
    return response


@staff_member_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    """GET lists the tokens; POST creates one and answers with its secret, once."""
    if request.method == "GET":
        return _render(request, _blank_form())
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _render(request, form, status=400)
    if _form_used(request, form.cleaned_data["once"]):
        messages.warning(
            request,
            "This form was sent already and its token made; the secret is not shown again. "
            "Revoke the token if the secret was lost, and make a new one.",
        )
        return _render(request, _blank_form(), status=409)
    try:
        created = token_create(
            name=form.cleaned_data["name"],
            namespaces=form.grants(),
            permissions=form.cleaned_data["permissions"],
            expires_at=form.expires_at(),
            created_by=staff_actor(request),
        )
    except InvalidTokenSpec as error:
        form.add_error(None, str(error))
        return _render(request, form, status=400)
    _remember_form(request, form.cleaned_data["once"])
    return _render(request, _blank_form(), created=created, status=201)


def _form_used(request: HttpRequest, once: str) -> bool:
    return once in request.session.get(USED_FORMS, [])


def _remember_form(request: HttpRequest, once: str) -> None:
    used = [*request.session.get(USED_FORMS, []), once]
    request.session[USED_FORMS] = used[-USED_FORMS_KEPT:]


@staff_member_required
@require_http_methods(["GET", "POST"])
def token_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    """GET asks for confirmation; POST revokes (the row stays, saying who and when)."""
    token = ApiToken.objects.filter(pk=token_id).first() if token_id <= MAX_SQL_INT else None
    if token is None:
        return error_response(request, f"No token has the number {token_id}.", 404)
    if token.revoked_at is not None:
        return error_response(request, _already(token), 409)
    if request.method == "GET":
        template = CONFIRM + ("#confirm" if request.htmx else "")  # type: ignore[attr-defined]
        return render(request, template, {"token": token, "inline": bool(request.htmx)})  # type: ignore[attr-defined]
    token = token_revoke(token_id=token.pk, revoked_by=staff_actor(request))
    if token.revoked_by != staff_actor(request):  # someone else revoked it a moment before
        return error_response(request, _already(token), 409)
    messages.success(request, f"Token {token.name!r} ({token.prefix}...) revoked.")
    if request.htmx:  # type: ignore[attr-defined]
        return _render(request, _blank_form())
    return HttpResponseRedirect(reverse("memories:tokens"))


def _already(token: ApiToken) -> str:
    by = f" by {token.revoked_by}" if token.revoked_by else ""
    return f"Token {token.name!r} was revoked already ({token.revoked_at:%Y-%m-%d %H:%M} UTC{by})."
