"""The namespace value type shared by memories, facts, threads and notes.

A namespace is a kind (workflow, agent, user, global) and an id, encoded
``kind:id``. In the id, ``%`` becomes ``%25`` and then ``:`` becomes ``%3A``, so
the first ``:`` always separates kind from id and every id round-trips:
``Namespace("user", "a:b")`` encodes to ``user:a%3Ab``, while the string
``user:a:b`` does not decode at all (an unescaped ``:`` in the id).

A name must not hide: it is NFC-normalised (so "é" typed as one code point or as
"e" and a combining accent is one namespace), and it holds no character a reader
cannot see or that changes how the text around it reads (see ``hidden_character``),
so two namespaces that look the same on a page are the same namespace.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

NAMESPACE_KINDS: tuple[str, ...] = ("workflow", "agent", "user", "global")
MAX_ENCODED_LENGTH = 255
# ``kind:*`` is how a token grant says "every namespace of the kind"; as a
# namespace it would be readable by every such grant, so it holds no data.
WILDCARD_ID = "*"
_ESCAPED = re.compile(r"%25|%3A")
_UNESCAPES = {"%25": "%", "%3A": ":"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# Unicode categories a name cannot hold: controls (Cc), format characters (Cf: the soft
# hyphen, zero-width spaces and joiners, the word joiner, the byte order mark, the
# bidirectional marks, embeddings, overrides and isolates, the invisible tag characters
# U+E0001..E007F), and every separator but the ordinary space (Zs such as the no-break
# space and U+3000 look like a space and are not one; Zl and Zp break the line).
# Surrogates (Cs) have their own message, above.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs"})
# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) outside Cf: drawn as
# nothing by renderers that do not support them (the combining grapheme joiner, the
# Hangul fillers, Khmer inherent vowels, Mongolian and other variation selectors, and the
# reserved ranges set aside for more of them), inclusive ranges of code points.
_IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
# What str.isspace() (and so str.strip()) counts as whitespace, as the body of a
# regular expression class: for patterns in the OpenAPI schema, where "\s" differs
# between ECMA 262 and Python.
WHITESPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def is_hidden(ch: str) -> bool:
    """Whether a namespace cannot hold ``ch``: a control, format or default-ignorable
    character, or a separator other than the ordinary space."""
    if ch == " ":
        return False
    code = ord(ch)
    if any(low <= code <= high for low, high in _IGNORABLE_RANGES):
        return True
    return unicodedata.category(ch) in _REFUSED_CATEGORIES


def describe_character(ch: str) -> str:
    """``U+00AD SOFT HYPHEN``; controls have no name in Unicode, so they say what they are."""
    name = unicodedata.name(ch, "")
    if not name:
        category = unicodedata.category(ch)
        name = {"Cc": "(a control character)", "Cn": "(unassigned)"}.get(category, f"({category})")
    return f"U+{ord(ch):04X} {name}"


def hidden_character(text: str) -> tuple[int, str] | None:
    """The first character of ``text`` a namespace cannot hold, as (position counted from
    1, its code point and name), or None."""
    if text.isascii() and text.isprintable():  # the usual name (every request): one pass in C
        return None
    for position, ch in enumerate(text, start=1):
        if is_hidden(ch):
            return position, describe_character(ch)
    return None


def _hidden_message(value: str, found: tuple[int, str], *, where: str) -> str:
    position, character = found
    return (
        f"{where} {value!r} holds {character} at position {position} (counting from 1): "
        "a namespace cannot hold control, format (zero-width, soft hyphen, bidirectional) "
        "or other invisible characters, nor spaces other than the ordinary one, since they "
        "would make it look like another namespace"
    )


def _class_ranges(codes: list[int]) -> str:
    """Ascending BMP code points as the body of a regular expression class (``\\uXXXX``
    escapes, understood alike by ECMA 262 and Python)."""
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(
        f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}" for low, high in ranges
    )


def _hidden_bmp() -> list[int]:
    """The BMP code points ``is_hidden`` refuses, in one pass over the categories (asking
    ``is_hidden`` of each of the 65,536 took ~0.15 s of CPU in every process that
    imported the API, i.e. every ``manage.py`` command that runs the URL check).
    Surrogates are left out: without the ``u`` flag ECMA 262 sees a character beyond
    the BMP as two of them."""
    category = unicodedata.category
    ignorable = {
        code for low, high in _IGNORABLE_RANGES if low < 0x10000 for code in range(low, high + 1)
    }
    return [
        code
        for code in range(0x10000)
        if not 0xD800 <= code <= 0xDFFF
        and code != 0x20
        and (code in ignorable or category(chr(code)) in _REFUSED_CATEGORIES)
    ]


@cache
def _hidden() -> str:
    """What a namespace cannot hold, for the schema's patterns (the BMP part: a pattern
    cannot name a character beyond it in both dialects; the service refuses those too).
    Built on first use: only the API's schema needs it."""
    return _class_ranges(_hidden_bmp())


def _pattern(*, exclude: str = "") -> str:
    """A regular expression (ECMA 262 and Python alike) for encoded namespaces.

    It says what ``Namespace.decode`` accepts, apart from the length (``maxLength``
    in the schema) and hidden characters beyond the BMP: a kind, ``:``, and an id of
    characters other than ``%``, ``:`` and hidden ones (``is_hidden``), where ``%``
    only starts ``%25`` or ``%3A``; no whitespace (as ``str.strip`` sees it) at either
    end; not ``*`` alone. ``exclude`` adds characters the id cannot hold (``/`` in a
    URL path segment). NFC normalisation changes a name without refusing it.
    """
    hidden = _hidden()
    unit = rf"[^%:{hidden}{exclude}]|%25|%3A"
    edge = rf"[^%:{hidden}{WHITESPACE}{exclude}]|%25|%3A"
    first = rf"[^%:*{hidden}{WHITESPACE}{exclude}]|%25|%3A"
    kinds = "|".join(NAMESPACE_KINDS)
    return rf"^(?:{kinds}):(?:(?:{first})(?:(?:{unit})*(?:{edge}))?|\*(?:{unit})*(?:{edge}))$"


# HIDDEN, and for the OpenAPI schema (bodies and query strings; path segments cannot hold
# "/") NAMESPACE_PATTERN and NAMESPACE_PATH_PATTERN: built when first imported (_hidden).
_LAZY: dict[str, Callable[[], str]] = {
    "HIDDEN": _hidden,
    "NAMESPACE_PATTERN": cache(_pattern),
    "NAMESPACE_PATH_PATTERN": cache(lambda: _pattern(exclude="/")),
}


def __getattr__(name: str) -> str:
    try:
        return _LAZY[name]()
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


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
        # One spelling per name: composed and decomposed accents are the same namespace.
        object.__setattr__(self, "id", unicodedata.normalize("NFC", self.id))
        if self.kind not in NAMESPACE_KINDS:
            raise InvalidNamespace(
                f"namespace kind {self.kind!r} is not one of {', '.join(NAMESPACE_KINDS)}"
            )
        if not self.id or self.id != self.id.strip():
            raise InvalidNamespace("namespace id must be non-empty, without surrounding spaces")
        if _SURROGATE.search(self.id):
            raise InvalidNamespace("namespace id is not valid Unicode text (lone surrogate)")
        found = hidden_character(self.id)
        if found is not None:
            raise InvalidNamespace(_hidden_message(self.id, found, where="namespace id"))
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
        if not _SURROGATE.search(value):  # else __post_init__ says so
            found = hidden_character(value)
            if found is not None:  # its position in the name as given
                raise InvalidNamespace(_hidden_message(value, found, where="namespace"))
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
