"""How the dashboard answers an error, on every page (memories, notes, the project's own).

- An htmx request: the message goes to the flash region (``HX-Retarget: #flash``,
  ``HX-Reswap: outerHTML``); whatever the request targeted (a queue, a row, a form) stays
  as it was. Before, a 400 "choose at least one memory" replaced the whole candidate queue
  with a bare line of text.
- A plain request: a page with the navigation (``templates/error.html``), the status and
  the message, and links back.

Django's 400/403/404/500 handlers (``spaceduck.urls``), the CSRF failure view and
``MethodNotAllowedPage`` (the 405 of ``require_POST``, empty otherwise) use the same page;
under ``/api/`` they answer JSON (``{"detail": ...}``), as the API's own errors do.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404, resolve
from django.utils.http import url_has_allowed_host_and_scheme

TITLES = {
    400: "Bad request",
    401: "Session ended",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Already decided",
    413: "Too large",
    422: "Not accepted",
    500: "Something went wrong",
}


def staff_actor(request: HttpRequest) -> str:
    """Who a dashboard change is recorded as (history, tokens, erasures): ``staff:<user>``."""
    return f"staff:{request.user.get_username()}"


def back_to(request: HttpRequest, default: str) -> str:
    """Where a form goes after its POST, or a Cancel leads: ``next`` (the page it came
    from) when it is a path on this site, else ``default``."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    ours = url_has_allowed_host_and_scheme(target, allowed_hosts=None)
    return target if ours and target.startswith("/") else default


def error_response(
    request: HttpRequest, message: str, status: int, *, back: str = ""
) -> HttpResponse:
    """The message where the person will see it, the page they were on intact; ``back``
    is the page to offer first (the page whose button a 405's URL belongs to)."""
    context = {
        "message": message,
        "status": status,
        "title": TITLES.get(status, "Error"),
        "back": back,
    }
    if getattr(request, "htmx", False):
        response = render(request, "error.html#error-flash", context, status=status)
        response["HX-Retarget"] = "#flash"
        response["HX-Reswap"] = "outerHTML"
        return response
    return render(request, "error.html", context, status=status)


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": "Bad request"}, status=400)
    return error_response(request, "The request could not be read.", 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": "Forbidden"}, status=403)
    return error_response(request, str(exception or "") or "You may not open this page.", 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"detail": f"Not Found: {request.path}"}, status=404)
    said = exception.args[0] if exception is not None and exception.args else ""
    message = said if isinstance(said, str) and said else f"There is no page at {request.path}."
    return error_response(request, message, 404)


# A page left open across a logout and a new login (the login rotated its CSRF token).
FORM_EXPIRED = (
    "This form has expired or did not come from this site: reload the page and try again."
)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form sent without its CSRF token, or from a page opened before the session changed."""
    if _api(request):
        return JsonResponse({"detail": "Forbidden"}, status=403)
    return error_response(request, FORM_EXPIRED, 403)


def server_error(request: HttpRequest) -> HttpResponse:
    """The error page with the navigation, rendered without the request: no context
    processors and no database (whatever failed may fail again here), so no counts and no
    user name. htmx puts it in the message area as any other error (base.html lets it swap)."""
    if _api(request):
        return JsonResponse({"detail": "Internal server error"}, status=500)
    context = {
        "message": "The error was logged.",
        "status": 500,
        "title": TITLES[500],
        "without_request": True,
    }
    if getattr(request, "htmx", False) or request.headers.get("HX-Request") == "true":
        body = loader.get_template("error.html#error-flash").render(context)
        response = HttpResponse(body, status=500)
        response["HX-Retarget"] = "#flash"
        response["HX-Reswap"] = "outerHTML"
        return response
    try:
        body = loader.get_template("error.html").render(context)
    except Exception:  # the page itself fails: the plain one, which needs nothing
        body = loader.get_template("error_500.html").render(context)
    return HttpResponse(body, status=500)


class MethodNotAllowedPage:
    """A 405 of ``require_POST`` / ``require_http_methods`` is an empty body: a page opened by
    hand (``GET /memories/10/edit/``) showed nothing. It becomes the error page with the
    navigation (for htmx, the message area), the ``Allow`` header kept."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not isinstance(response, HttpResponseNotAllowed) or _api(request):
            return response
        allowed = response.get("Allow", "")
        how = " or ".join(method.strip() for method in allowed.split(","))
        message = (
            f"{request.path} is not a page to open with {request.method}: it takes {how}, "
            "which the buttons on the pages send."
        )
        page = error_response(request, message, 405, back=_page_above(request.path))
        page["Allow"] = allowed
        return page


def _page_above(path: str) -> str:
    """The page a button's URL belongs to (``/memories/10/`` for ``/memories/10/edit/``)
    when there is one at that path, else ""."""
    parent = path.rstrip("/").rpartition("/")[0] + "/"
    if parent in ("/", path):
        return ""
    try:
        resolve(parent)
    except Resolver404:
        return ""
    return parent
