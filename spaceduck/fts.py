"""Turn user text into a safe FTS5 MATCH expression (shared by note search and recall).

The user's query is always literal text: each whitespace-separated chunk that
holds at least one letter or digit becomes a double-quoted FTS5 string (inner
quotes doubled), so FTS syntax (AND/OR/NOT/NEAR, ``*``, ``^``, ``:``, column
filters, parentheses) is never interpreted. FTS5 then tokenizes each quoted
chunk with the table's own tokenizer, so ``café`` finds ``cafe`` and ``a-b``
is the phrase "a b". NUL and lone surrogates, which SQLite cannot bind, are
dropped. Chunks with no letter or digit are dropped: an empty FTS phrase would
make an AND query match nothing.
"""

from __future__ import annotations

import re
from typing import Literal

_UNBINDABLE = re.compile("[\x00\ud800-\udfff]")
MAX_TERMS = 32


def literal_terms(text: str) -> list[str]:
    """The searchable chunks of ``text``, de-duplicated in order, at most MAX_TERMS."""
    cleaned = _UNBINDABLE.sub(" ", text)
    seen: dict[str, None] = {}
    for chunk in cleaned.split():
        if any(ch.isalnum() for ch in chunk):
            seen.setdefault(chunk, None)
    return list(seen)[:MAX_TERMS]


def match_expression(text: str, *, operator: Literal["AND", "OR"] = "AND") -> str | None:
    """A MATCH expression for ``text``, or None when nothing in it is searchable."""
    terms = literal_terms(text)
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    return f" {operator} ".join(quoted)
