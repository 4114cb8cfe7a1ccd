"""Log lines without personal data: request targets with their query values and namespace ids
replaced, e-mail addresses removed.

A query string carries what people search for (``/people/?q=alice@example.com``, recall's
``?q=``) and a path may carry a namespace whose id names a person (``/api/namespaces/
user:alice@example.com``). Logs are kept longer and read by more people than the database,
and erase cannot reach them, so none of that is written:

- every query value becomes ``[redacted]`` (parameter names stay, so a line still says which
  filters a request used; a name that is not a plain identifier, or a word without ``=``,
  is redacted too);
- a path segment that is a namespace keeps its kind and loses its id (``user:[redacted]``);
  any other segment holding an ``@`` is redacted whole;
- any e-mail address left in a log message, or in the traceback logged with it, is replaced.

One home for the rules, used by gunicorn's access and error logs (``AccessLog``, which
`manage.py serve` passes as ``--logger-class``) and by Django's loggers (``RedactUrls``, a
filter that settings.LOGGING puts on the console handler and on the loggers that write request
paths: django.request, django.server, django.security.csrf).
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import unquote

from gunicorn.glogging import Logger as GunicornLogger

from spaceduck.core.namespaces import NAMESPACE_KINDS

REDACTED = "[redacted]"
_NAMESPACE_SEGMENT = re.compile(rf"^({'|'.join(NAMESPACE_KINDS)})(?::|%3A)(.+)$", re.IGNORECASE)
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\[\]-]{0,40}$")
_EMAIL = re.compile(r"[^\s@\"'<>()/:;,=?&]+@[^\s@\"'<>()/;,=?&]+", re.IGNORECASE)
# An absolute path or URL inside free text: after a space, a quote, "(" or "=", or at the start.
_TARGET_IN_TEXT = re.compile(
    r"""(?:(?<=[\s"'(=])|^)(?:[a-z][a-z0-9+.-]*://[^\s"'/]*)?/[^\s"'<>]*""", re.IGNORECASE
)
_TRACEBACKS = logging.Formatter()
_SCHEME_HOST = re.compile(r"^([a-z][a-z0-9+.-]*://)(?:[^/@]*@)?([^/]*)(.*)$", re.IGNORECASE)


def redact_path(path: str) -> str:
    """``path`` with namespace ids and segments holding an ``@`` replaced."""
    return "/".join(_redact_segment(segment) for segment in path.split("/"))


def _redact_segment(segment: str) -> str:
    namespace = _NAMESPACE_SEGMENT.match(segment)
    if namespace:
        return f"{namespace.group(1)}:{REDACTED}"
    return REDACTED if "@" in unquote(segment) else segment


def redact_query(query: str) -> str:
    """``a=1&q=alice`` -> ``a=[redacted]&q=[redacted]``: names kept, every value replaced."""
    return "&".join(_redact_pair(pair) for pair in query.split("&"))


def _redact_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if not equals:  # "?alice@example.com": a bare word is a value
        return REDACTED if name else ""
    name = name if not name or _PLAIN_NAME.match(unquote(name)) else REDACTED
    return f"{name}={REDACTED if value else ''}"


def redact_target(target: str) -> str:
    """A request target (path, ``?`` query, ``#`` fragment) as it may be logged."""
    target, hashmark, _fragment = target.partition("#")
    path, question, query = target.partition("?")
    redacted = redact_path(path) + (f"?{redact_query(query)}" if question else "")
    return redacted + (f"#{REDACTED}" if hashmark else "")


def redact_url(url: str) -> str:
    """A URL (a referer) or a bare target: the user info dropped, the target redacted."""
    full = _SCHEME_HOST.match(url)
    if full is None:
        return redact_target(url)
    scheme, host, target = full.groups()
    return f"{scheme}{host}{redact_target(target)}"


def redact_text(text: str) -> str:
    """Free text (a log message): each path or URL in it redacted, then any e-mail address."""
    text = _TARGET_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    return _EMAIL.sub(REDACTED, text)


class RedactUrls(logging.Filter):
    """Rewrites a record's message with ``redact_text`` (and keeps the record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: logging reports it when the record is written
            return True
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            # An exception's message may quote a value ("... user:alice@example.com"); the
            # formatters write exc_text, when set, instead of formatting exc_info again.
            record.exc_text = redact_text(_TRACEBACKS.formatException(record.exc_info))
        return True


class AccessLog(GunicornLogger):  # type: ignore[misc]
    """gunicorn's logger, writing request lines and referers redacted."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        self.error_log.addFilter(RedactUrls())  # "Invalid request from ...: GET /?q=..."

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> Any:
        atoms = super().atoms(resp, req, environ, request_time)
        target = redact_target(environ.get("RAW_URI") or "")
        method, protocol = environ.get("REQUEST_METHOD", "-"), environ.get("SERVER_PROTOCOL")
        referer = atoms.get("f", "-")
        atoms.update(
            {
                "r": f"{method} {target} {protocol}",
                "U": redact_path(environ.get("PATH_INFO") or ""),
                "q": redact_query(environ.get("QUERY_STRING") or ""),
                "f": referer if referer == "-" else redact_url(referer),
            }
        )
        # The raw values under other names (request headers "{referer}i", the WSGI
        # environment "{query_string}e", ...): an access_log_format that asks gets "-".
        for name in [name for name in atoms if name.startswith("{")]:
            if name.endswith("}e") or name in ("{referer}i", "{cookie}i", "{authorization}i"):
                del atoms[name]
        return atoms
