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
_ESCAPED = re.compile(r"%25|%3A")
_UNESCAPES = {"%25": "%", "%3A": ":"}


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
