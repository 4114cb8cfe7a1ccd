"""The namespace value type shared by memories, facts, threads and notes.

A namespace is a kind (workflow, agent, user, global) and an id, encoded
``kind:id``. In the id, ``%`` becomes ``%25`` and then ``:`` becomes ``%3A``, so
the first ``:`` always separates kind from id and every id round-trips:
``Namespace("user", "a:b")`` encodes to ``user:a%3Ab``, while the string
``user:a:b`` does not decode at all (an unescaped ``:`` in the id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

NAMESPACE_KINDS: tuple[str, ...] = ("workflow", "agent", "user", "global")
MAX_ENCODED_LENGTH = 255
# ``kind:*`` is how a token grant says "every namespace of the kind"; as a
# namespace it would be readable by every such grant, so it holds no data.
WILDCARD_ID = "*"
_ESCAPED = re.compile(r"%25|%3A")
_UNESCAPES = {"%25": "%", "%3A": ":"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# What str.isspace() (and so str.strip()) counts as whitespace, as the body of a
# regular expression class: for patterns in the OpenAPI schema, where "\s" differs
# between ECMA 262 and Python.
WHITESPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _pattern(*, exclude: str = "") -> str:
    """A regular expression (ECMA 262 and Python alike) for encoded namespaces.

    It says exactly what ``Namespace.decode`` accepts, apart from the length
    (``maxLength`` in the schema): a kind, ``:``, and an id of characters other
    than ``%``, ``:`` and controls, where ``%`` only starts ``%25`` or ``%3A``;
    no whitespace (as ``str.strip`` sees it) at either end; not ``*`` alone.
    ``exclude`` adds characters the id cannot hold (``/`` in a URL path segment).
    """
    unit = rf"[^%:\x00-\x1f{exclude}]|%25|%3A"
    edge = rf"[^%:\x00-\x1f{WHITESPACE}{exclude}]|%25|%3A"
    first = rf"[^%:*\x00-\x1f{WHITESPACE}{exclude}]|%25|%3A"
    kinds = "|".join(NAMESPACE_KINDS)
    return rf"^(?:{kinds}):(?:(?:{first})(?:(?:{unit})*(?:{edge}))?|\*(?:{unit})*(?:{edge}))$"


# For the OpenAPI schema (bodies and query strings; path segments cannot hold "/").
NAMESPACE_PATTERN = _pattern()
NAMESPACE_PATH_PATTERN = _pattern(exclude="/")


class InvalidNamespace(ValueError):
    pass


def _escape(raw_id: str) -> str:
    return raw_id.replace("%", "%25").replace(":", "%3A")


def _unescape(encoded_id: str) -> str:
    # One pass, so "%253A" decodes to "%3A" and not to ":".
    return _ESCAPED.sub(lambda match: _UNESCAPES[match.group(0)], encoded_id)


@dataclass(frozen=True, order=True)
class Namespace:
    kind: str
    id: str

    KINDS: ClassVar[tuple[str, ...]] = NAMESPACE_KINDS

    def __post_init__(self) -> None:
        if self.kind not in NAMESPACE_KINDS:
            raise InvalidNamespace(
                f"namespace kind {self.kind!r} is not one of {', '.join(NAMESPACE_KINDS)}"
            )
        if not self.id or self.id != self.id.strip():
            raise InvalidNamespace("namespace id must be non-empty, without surrounding spaces")
        if any(ord(ch) < 32 for ch in self.id):
            raise InvalidNamespace("namespace id must not contain control characters")
        if _SURROGATE.search(self.id):
            raise InvalidNamespace("namespace id is not valid Unicode text (lone surrogate)")
        if self.id == WILDCARD_ID:
            raise InvalidNamespace(
                f"'{self.kind}:*' is not a namespace: it is the token grant for every "
                f"{self.kind} namespace; name one namespace, e.g. {self.kind}:alice"
            )
        if len(self.encode()) > MAX_ENCODED_LENGTH:
            raise InvalidNamespace(f"namespace is longer than {MAX_ENCODED_LENGTH} characters")

    def encode(self) -> str:
        return f"{self.kind}:{_escape(self.id)}"

    __str__ = encode

    @classmethod
    def decode(cls, value: str) -> Namespace:
        kind, sep, encoded_id = value.partition(":")
        if not sep:
            raise InvalidNamespace(f"namespace {value!r} is not of the form kind:id")
        if ":" in encoded_id:
            raise InvalidNamespace(
                f"namespace {value!r} has an unescaped ':' in its id; write it as %3A"
            )
        if _escape(_unescape(encoded_id)) != encoded_id:
            raise InvalidNamespace(
                f"namespace {value!r} has a stray '%' in its id; write a literal % as %25"
            )
        return cls(kind, _unescape(encoded_id))


def normalize_namespace(value: str) -> str:
    """Validate an encoded namespace and return its canonical encoding."""
    return Namespace.decode(value).encode()


def namespace_kind(value: str) -> str:
    return value.partition(":")[0]
