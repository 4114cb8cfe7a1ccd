"""A dashboard session that ended, as the person sees it.

Staff pages answer a request without a staff session with a redirect to the login page
(Django's ``staff_member_required``, the admin's own pages). For a plain request that is
right. For an htmx request it is not: the browser follows the redirect inside the request
and htmx swaps the login form into a row or a queue, while the header still says who was
logged in. So an htmx request gets ``HX-Redirect`` instead: a full navigation to the login
page, which leads back to the page the person was on (``HX-Current-URL``), not to the URL
of the button's POST. No view runs, so no decision is taken without a session.

A page left open across a logout and a new login carries a CSRF token that the login
rotated: its next POST fails the CSRF check, which ``spaceduck.core.pages.csrf_failure``
answers (a message in the flash region for htmx).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url

SESSION_ENDED = "Your session has ended: log in again to go on. Nothing was changed."


class HtmxLoginRedirect:
    """Turn a staff page's redirect to the login page into ``HX-Redirect`` for htmx."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not _htmx(request) or response.status_code != 302:
            return response
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(response["Location"]).path != login:
            return response
        return session_ended(request, login)


def session_ended(request: HttpRequest, login: str) -> HttpResponse:
    """401 with ``HX-Redirect`` to the login page; the message goes to the flash region in
    case a client does not follow the header."""
    from spaceduck.core.pages import error_response

    response = error_response(request, SESSION_ENDED, 401)
    response["HX-Redirect"] = f"{login}?{urlencode({'next': _page_of(request)})}"
    return response


def _page_of(request: HttpRequest) -> str:
    """The page the person was on (same site only), else the requested path. A GET of the
    page's own path is where they were going (a filter or a search the page puts in the
    address bar), so its query is kept: the filter chosen as the session ended is not lost."""
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    if request.method == "GET" and current.path == request.path:
        return request.get_full_path()
    if current.path.startswith("/") and current.netloc in ("", request.get_host()):
        return current.path + (f"?{current.query}" if current.query else "")
    return request.get_full_path() if request.method == "GET" else "/"


def _htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"
