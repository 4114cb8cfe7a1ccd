"""The limits every front end shares: sizes, text, integers and datetimes.

Sizes are settings (``SPACEDUCK_MAX_*``, read at call time); the other limits
are what SQLite and Python can hold. The services call the ``check_*``
functions, so the JSON API, the Python API (spaceduck.store), the CLI and the
admin refuse the same values with the same messages. Over a size limit is
``TooLarge`` (413), anything else ``InvalidInput`` (422); both are raised
before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Annotated, Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from ninja.params.models import QueryModel
from pydantic import AfterValidator, BeforeValidator, Field, StrictInt, StrictStr, WithJsonSchema
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticCustomError

from spaceduck.core.errors import InvalidInput, TooLarge
from spaceduck.core.namespaces import (
    MAX_ENCODED_LENGTH,
    NAMESPACE_PATH_PATTERN,
    NAMESPACE_PATTERN,
    WHITESPACE,
)

# SQLite's INTEGER is a signed 64-bit number; Python's int is unbounded.
MAX_SQL_INT = 2**63 - 1
# JSON values (message content, fact values, provenance) nest at most this deep.
# Deeper values are not data anyone means, and each level costs a Python stack
# frame in every encoder on the way to the database.
MAX_JSON_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")


# --- Text -----------------------------------------------------------------------------


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone UTF-16 surrogate (a JSON ``"\\ud800"`` escape does).

    Such a string cannot be encoded as UTF-8, so SQLite cannot store it and
    JSON encoders choke on it.
    """
    return _SURROGATE.search(text) is not None


def printable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, safe to echo in a message."""
    return _SURROGATE.sub("\ufffd", text)


def check_text(value: str, *, field: str) -> str:
    """``value`` if it is text either database stores as given, else InvalidInput naming
    the field: no lone surrogate (not UTF-8) and no NUL (PostgreSQL's text and JSON refuse
    it, and one product takes the same text on both databases)."""
    if has_lone_surrogate(value):
        raise InvalidInput(f"{field} is not valid Unicode text: it holds a lone surrogate")
    if "\x00" in value:
        raise InvalidInput(f"{field} holds a NUL character (U+0000), which is not stored as text")
    return value


def _children(value: Any, where: str) -> Iterator[tuple[Any, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (has_lone_surrogate(key) or "\x00" in key):
                raise InvalidInput(f"{where} has a key that is not valid Unicode text")
            yield item, f"{where}.{printable(str(key))}"
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield item, f"{where}[{index}]"


def check_json_value(value: Any, *, field: str) -> Any:
    """``value`` if it is JSON data the database can store: every string valid text
    (``check_text``), nested at most MAX_JSON_DEPTH levels. InvalidInput names where it is not.

    Iterative, so a deep value cannot exhaust the Python stack here.
    """
    pending: list[tuple[Any, str, int]] = [(value, field, 0)]
    while pending:
        item, where, depth = pending.pop()
        if isinstance(item, str):
            check_text(item, field=where)
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_JSON_DEPTH:
                raise InvalidInput(f"{field} is nested deeper than {MAX_JSON_DEPTH} levels")
            pending.extend((child, path, depth + 1) for child, path in _children(item, where))
    return value


# --- Sizes ------------------------------------------------------------------------------

# Memory.context: what a memory answers or continues (the turn before, then the message
# itself). Keyword-searched, not embedded. The extraction runner cuts it to this length;
# a direct write (POST /api/memories) longer than this is refused.
MAX_CONTEXT_CHARS = 2_000


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (a string counts as its text)."""
    if isinstance(value, str):
        return utf8_size(value)
    return utf8_size(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def check_size(size: int, *, limit: int, field: str, setting: str) -> None:
    if size > limit:
        raise TooLarge(
            f"{field} is {size:,} bytes, over the limit of {limit:,} bytes ({setting}); "
            "nothing was saved"
        )


# --- Integers and datetimes --------------------------------------------------------------


def check_sql_int(value: int, *, field: str) -> int:
    if not -MAX_SQL_INT - 1 <= value <= MAX_SQL_INT:
        raise InvalidInput(f"{field} must fit in 64 bits (at most {MAX_SQL_INT})")
    return value


# Datetimes are stored as naive UTC; converting an offset close to year 1 or 9999
# to UTC overflows. One day of margin on each side keeps every conversion, and
# the small steps the services take (+1 µs to keep messages in order), in range.
EARLIEST_DATETIME = datetime(1, 1, 2, tzinfo=UTC)
LATEST_DATETIME = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
_RANGE = "between 0001-01-02 and 9999-12-30 (UTC)"


def datetime_problem(value: datetime) -> str | None:
    """Why ``value`` cannot be stored, or None. Naive values are read as UTC."""
    try:
        utc = value.astimezone(UTC) if value.utcoffset() is not None else value.replace(tzinfo=UTC)
    except OverflowError:
        return f"must lie {_RANGE}"
    if not EARLIEST_DATETIME <= utc <= LATEST_DATETIME:
        return f"must lie {_RANGE}"
    return None


def in_utc(value: datetime) -> datetime:
    """An aware ``value`` in UTC (naive values are left alone: they are read as UTC).

    PostgreSQL refuses offsets beyond ±15:59 that RFC 3339 allows (up to ±23:59), and
    both databases store UTC anyway."""
    return value.astimezone(UTC) if value.utcoffset() is not None else value


def check_datetime(value: datetime, *, field: str) -> datetime:
    problem = datetime_problem(value)
    if problem is not None:
        raise InvalidInput(f"{field} {problem}, got {value.isoformat()}")
    return in_utc(value)


# RFC 3339, which is what the schema's "date-time" format promises: a date, "T", a
# time and an offset. pydantic alone would also take bare dates, naive times and
# Unix timestamps, and a naive time would silently be read in the server's zone.
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


# The API's rule, on the text as written so the schema can state it exactly: the
# date part lies in [0001-01-03, 9999-12-29]. Any offset then lands inside the UTC
# range above (an offset moves a time by less than a day).
API_FIRST_DATE, API_LAST_DATE = "0001-01-03", "9999-12-29"
_API_DATE_PATTERN = r"^(?!0001-01-0[12]|9999-12-(?:3[01]))"


def _rfc3339_text(value: object) -> object:
    if isinstance(value, datetime):
        return value  # already parsed (Python callers)
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError(
            "must be an RFC 3339 date-time with a timezone offset, e.g. 2024-05-01T12:00:00Z"
        )
    if not API_FIRST_DATE <= value[:10] <= API_LAST_DATE:
        raise ValueError(f"must lie between {API_FIRST_DATE} and {API_LAST_DATE}")
    return value


def _storable(value: datetime) -> datetime:
    problem = datetime_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return in_utc(value)


# A datetime as the JSON API accepts it (request schemas): RFC 3339, in range.
ApiDatetime = Annotated[
    datetime,
    BeforeValidator(_rfc3339_text),
    AfterValidator(_storable),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "pattern": _API_DATE_PATTERN,
            "description": f"RFC 3339 with an offset; the date between {API_FIRST_DATE} "
            f"and {API_LAST_DATE}.",
        }
    ),
]


# An unknown query parameter is a 422 naming it, not silently ignored: "topk=5" or
# "namesapce=..." would otherwise answer as if they were not there. ninja maps the
# query onto each route's parameters by name (``__ninja_flatten_map__``) and drops
# the rest, so the check goes there; a 422 is raised the way a bad value is.
_map_query = QueryModel._map_data_paths.__func__  # type: ignore[attr-defined]


def _known_query_only(cls: type[QueryModel], data: dict[str, Any]) -> dict[str, Any]:
    known = getattr(cls, "__ninja_flatten_map__", None) or cls.model_fields
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise PydanticValidationError.from_exception_data(
            cls.__name__,
            [{"type": "extra_forbidden", "loc": (name,), "input": data[name]} for name in unknown],
        )
    return _map_query(cls, data)  # type: ignore[no-any-return]


QueryModel._map_data_paths = classmethod(_known_query_only)  # type: ignore[assignment,method-assign]


# --- Types for the API's schemas ----------------------------------------------------------
# They document in the OpenAPI schema what the services check, so a client (or a
# fuzzer) sees the real rules; the services' checks stay the ones that answer.


def documented(schema: dict[str, Any]) -> WithJsonSchema:
    """A string's schema as the OpenAPI document shows it; the services' checks answer."""
    return WithJsonSchema({"type": "string", **schema})


ApiNamespace = Annotated[
    StrictStr,
    documented(
        {
            "pattern": NAMESPACE_PATTERN,
            "maxLength": MAX_ENCODED_LENGTH,
            "description": "kind:id with kind workflow, agent, user or global; in the id, "
            "% is written %25 and : is written %3A; kind:* is a token grant, not a namespace.",
        }
    ),
]
# A namespace as one URL path segment (no "/").
ApiNamespaceSegment = Annotated[
    str, documented({"pattern": NAMESPACE_PATH_PATTERN, "maxLength": MAX_ENCODED_LENGTH})
]


def choices_pattern(values: Iterable[str], *, blanks: bool) -> str:
    """A pattern for a comma-separated list of ``values``, spaces around items allowed.

    ``blanks``: empty items (and an empty list) are allowed, as
    memories.store.selectors.parse_choices allows them.
    """
    space = f"[{WHITESPACE}]*"
    item = "(?:" + "|".join(re.escape(value) for value in values) + ")"
    one = f"{space}(?:{item}{space})?" if blanks else f"{space}{item}{space}"
    return f"^{one}(?:,{one})*$"


def api_choices(values: Iterable[str], *, blanks: bool = True) -> Any:
    """A comma-separated filter of ``values`` (a query parameter's type)."""
    values = list(values)
    return Annotated[
        str,
        documented(
            {
                "pattern": choices_pattern(values, blanks=blanks),
                "description": "Comma-separated: " + ", ".join(values) + ".",
            }
        ),
    ]


def _integral(value: object) -> object:
    # JSON Schema counts 3.0 as an integer; Python's json reads it as a float.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def api_int(*, ge: int, le: int) -> Any:
    """An integer in a JSON body, within [ge, le]: a JSON number without a fraction
    (3 or 3.0), never a string or a boolean."""
    return Annotated[StrictInt, Field(ge=ge, le=le), BeforeValidator(_integral)]


# --- A memory's text fields ------------------------------------------------------------------
# One home for the lengths a memory's fields may have. The API's schemas (memories.api),
# the dashboard's and the admin's forms (``limit_form_fields``) and the services
# (memories.write.edits.memory_edit, the write path) all read them here, so every front end
# refuses the same value with the same words: "at most N characters".

MAX_TAG_CHARS = 100
MAX_SCOPE_ID_CHARS = 255  # Memory.scope_id's column


def memory_text_limits() -> dict[str, tuple[int, str]]:
    """field -> (at most this many characters, the setting or column that says so);
    read at call time, so an overridden setting counts."""
    content = (settings.MAX_MEMORY_CONTENT_CHARS, "SPACEDUCK_MAX_MEMORY_CONTENT_CHARS")
    return {
        "title": (settings.MAX_MEMORY_TITLE_CHARS, "SPACEDUCK_MAX_MEMORY_TITLE_CHARS"),
        "content": content,
        "summary": content,
        "scope_id": (MAX_SCOPE_ID_CHARS, "the scope_id column"),
    }


def max_memory_tags() -> int:
    return int(settings.MAX_MEMORY_TAGS)


def text_length_problem(value: str, *, field: str, limit: int, source: str = "") -> str | None:
    """The words every front end uses for text over its length, or None.

    The one message source for "too long": the API's schemas (``api_text``), the services,
    the dashboard's and the admin's forms (``limit_form``) all say it with these words. A
    length is counted in code points (Python's ``len``), as the API counts: not in UTF-16
    units as a browser's ``maxlength`` would (an emoji is two of those), nor in bytes."""
    if len(value) <= limit:
        return None
    said = f" ({source})" if source else ""
    return f"{field} should have at most {limit:,} characters{said}, not {len(value):,}"


def check_length(value: str, *, field: str, limit: int, source: str = "") -> str:
    """``value``, or InvalidInput in ``text_length_problem``'s words."""
    problem = text_length_problem(value, field=field, limit=limit, source=source)
    if problem is not None:
        raise InvalidInput(problem)
    return value


def api_text(
    limit: int, *, field: str, source: str = "", min_length: int = 0, pattern: str = ""
) -> Any:
    """A string of at most ``limit`` code points in a request schema, refused (422) in
    ``text_length_problem``'s words rather than pydantic's own ("String should have at
    most ..."), so the API says what the forms and the services say."""

    def check(value: str) -> str:
        problem = text_length_problem(value, field=field, limit=limit, source=source)
        if problem is not None:
            raise PydanticCustomError("too_long", problem)
        return value

    schema: dict[str, Any] = {"type": "string", "maxLength": limit}
    if min_length:
        schema["minLength"] = min_length
    if pattern:
        schema["pattern"] = pattern
    return Annotated[
        StrictStr, Field(min_length=min_length), AfterValidator(check), WithJsonSchema(schema)
    ]


def tags_problem(tags: Iterable[str]) -> str | None:
    """Why ``tags`` are more or longer than a memory may have, or None."""
    tags = list(tags)
    limit = max_memory_tags()
    if len(tags) > limit:
        return (
            f"tags should have at most {limit} items (SPACEDUCK_MAX_MEMORY_TAGS), not {len(tags)}"
        )
    for tag in tags:
        problem = text_length_problem(
            str(tag), field="each tag", limit=MAX_TAG_CHARS, source="the tag limit"
        )
        if problem is not None:
            return problem
    return None


def _api_tags(value: list[str]) -> list[str]:
    problem = tags_problem(value)
    if problem is not None:
        raise PydanticCustomError("too_long", problem)
    return value


def api_tags() -> Any:
    """A memory's tags in a request schema, refused (422) in ``tags_problem``'s words."""
    schema = {
        "type": "array",
        "items": {"type": "string", "maxLength": MAX_TAG_CHARS},
        "maxItems": max_memory_tags(),
    }
    return Annotated[list[StrictStr], AfterValidator(_api_tags), WithJsonSchema(schema)]


def memory_field_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is too long for the memory field ``name``, or None (also for fields
    without a length limit)."""
    if name == "tags" and isinstance(value, list | tuple):
        return tags_problem(value)
    limit = memory_text_limits().get(name)
    if limit is None or not isinstance(value, str):
        return None
    return text_length_problem(value, field=name, limit=limit[0], source=limit[1])


def check_memory_fields(fields: dict[str, Any]) -> None:
    """InvalidInput naming every field of ``fields`` over its limit; nothing is written."""
    problems = [
        problem
        for name, value in fields.items()
        if (problem := memory_field_problem(name, value)) is not None
    ]
    if problems:
        raise InvalidInput("; ".join(problems) + "; nothing was saved")


# --- The same limits in a form -------------------------------------------------------------


def _split_tags(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(tag) for tag in value]
    return [tag.strip() for tag in str(value or "").split(",") if tag.strip()]


def tags_hint() -> str:
    return (
        f"Comma-separated: at most {max_memory_tags()} tags, "
        f"each at most {MAX_TAG_CHARS} characters."
    )


# A limited input carries ``data-maxchars`` (or ``data-maxbytes`` for a limit in UTF-8 bytes):
# static/js/limits.js shows "n / max" under it as one types, counting as the server counts.
# Never ``maxlength``: a browser counts that in UTF-16 units (a 150-emoji title is 300 of
# them, so a title the API took could not be saved again) and silently cuts a longer paste,
# which then saves. Here the whole text reaches the server, which refuses it with its count.
MAX_CHARS_ATTR = "data-maxchars"
MAX_BYTES_ATTR = "data-maxbytes"


class _LengthCheck:
    """A form field's length check in ``text_length_problem``'s words (a class, so that
    limiting a field again replaces it instead of adding a second one)."""

    def __init__(self, *, name: str, limit: int, source: str) -> None:
        self.name, self.limit, self.source = name, limit, source

    def __call__(self, value: Any) -> None:
        problem = text_length_problem(
            str(value), field=self.name, limit=self.limit, source=self.source
        )
        if problem is not None:
            raise ValidationError(problem, code="max_length")


def _other_checks(field: forms.Field) -> list[Any]:
    return [v for v in field.validators if not isinstance(v, MaxLengthValidator | _LengthCheck)]


def limit_field(field: forms.Field, *, name: str, limit: int, source: str = "") -> None:
    """``field`` counts code points up to ``limit``: the counter's attribute on its input, and
    ``text_length_problem``'s words for a longer value instead of Django's own check."""
    field.max_length = limit  # type: ignore[attr-defined]
    field.widget.attrs.pop("maxlength", None)
    field.widget.attrs[MAX_CHARS_ATTR] = str(limit)
    field.validators = [*_other_checks(field), _LengthCheck(name=name, limit=limit, source=source)]


def limit_field_bytes(field: forms.Field, *, limit: int) -> None:
    """The counter for a limit in UTF-8 bytes (a note's body, a fact's value); the check
    stays the service's (``check_size``), which the form's clean calls."""
    field.widget.attrs.pop("maxlength", None)
    field.widget.attrs[MAX_BYTES_ATTR] = str(limit)


def limit_form(form: forms.BaseForm, limits: dict[str, tuple[int, str]] | None = None) -> None:
    """Every text field of ``form`` with a length limit counts code points with the shared
    words (``limit_field``): the limit of ``limits`` (field -> (limit, its source)) where it
    names the field, else the field's own ``max_length``. No input keeps a ``maxlength``."""
    limits = limits or {}
    for name, field in form.fields.items():
        limit, source = limits.get(name, (getattr(field, "max_length", None), ""))
        if isinstance(field, forms.CharField) and limit is not None:
            limit_field(field, name=name, limit=limit, source=source)
        else:
            field.widget.attrs.pop("maxlength", None)


class CountedForm(forms.Form):
    """A form whose text fields count code points and say "too long" in the shared words
    (``limit_form``): the dashboard's forms are these."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_form(self)


def limit_memory_form(form: forms.BaseForm) -> None:
    """Give a form's memory fields (title, content, summary, scope_id, tags) the limits
    above, and its other text fields their own (``limit_form``): the counter on each input
    and the services' words beside the field, the same as the API's and the services'."""
    limit_form(form, memory_text_limits())
    tags = form.fields.get("tags")
    if tags is not None:
        tags.widget.attrs.pop(MAX_CHARS_ATTR, None)  # a limit per tag and a count: the hint
        tags.help_text = tags_hint()
        tags.validators = [*(v for v in _other_checks(tags) if v is not _check_tags), _check_tags]


def _check_tags(value: Any) -> None:
    problem = tags_problem(_split_tags(value))
    if problem is not None:
        raise ValidationError(problem, code="max_length")
