"""Placeholder: filled in by the page's implementation."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def _todo(request: HttpRequest, **kwargs: object) -> HttpResponse:
    raise Http404("not built yet")


extraction_list = extraction_detail = extraction_retry = _todo
