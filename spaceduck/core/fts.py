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

import hashlib
import re
import unicodedata
from typing import Literal

from spaceduck.core.stemming import stem

_UNBINDABLE = re.compile("[\x00\ud800-\udfff]")
MAX_TERMS = 32


def fold(text: str) -> str:
    """``text`` as both databases' note indexes compare it: NFKC (a fullwidth or ligature
    letter is its plain one), then diacritics removed (NFKD without combining marks), so
    "cafe" + U+0301 (a decomposed accent, as macOS keyboards and many pastes produce),
    "café" and "cafe" are one word. FTS5's ``unicode61 remove_diacritics 2`` and
    PostgreSQL's ``spaceduck_fold`` (notes migration 0005) do the same to the notes."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    )


def literal_terms(text: str) -> list[str]:
    """The searchable chunks of ``text`` (folded), de-duplicated in order, at most MAX_TERMS."""
    cleaned = fold(_UNBINDABLE.sub(" ", text))
    seen: dict[str, None] = {}
    for chunk in cleaned.split():
        if any(ch.isalnum() for ch in chunk):
            seen.setdefault(chunk, None)
    return list(seen)[:MAX_TERMS]


def match_expression(text: str, *, operator: Literal["AND", "OR"] = "AND") -> str | None:
    """A MATCH expression for ``text``, or None when nothing in it is searchable."""
    return match_terms(literal_terms(text), operator=operator)


def match_terms(terms: list[str], *, operator: Literal["AND", "OR"] = "AND") -> str | None:
    """A MATCH expression of ``literal_terms``, each quoted as an FTS5 string."""
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    return f" {operator} ".join(quoted)


# --- Per-namespace index terms (the memories keyword index) ---------------------------

_WORD = re.compile(r"[^\W_]+")
# The same words in folded ASCII text (no capitals left, \w is [a-z0-9_] there), ~30%
# faster: recall reads the words of every candidate it re-scores.
_ASCII_WORD = re.compile(r"[a-z0-9]+")
NAMESPACE_KEY_LENGTH = 10


def index_words(text: str | None) -> list[str]:
    """The words of ``text`` as the keyword index reads them, in order (before stemming).

    Case-folded, diacritics removed (NFKD without combining marks), split into
    runs of letters and digits: what FTS5's ``unicode61 remove_diacritics 2``
    tokenizer does, done here so each word can carry its namespace's key. A stem
    of such a word is again one (``index_words(stem(w)) == [stem(w)]``).
    """
    if not text:
        return []
    folded = text.casefold()
    if folded.isascii():
        return _ASCII_WORD.findall(folded)
    folded = "".join(
        ch for ch in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(ch)
    )
    # Folded again: NFKD makes capitals of some caseless letters (U+1D47B MATHEMATICAL
    # BOLD ITALIC CAPITAL T -> "T", U+210C BLACK-LETTER CAPITAL H -> "H"), and a query
    # word must be its own index word (keyword_index.phrase checks it). FTS5's
    # tokenizer folds case as well, so the stored postings do not change.
    return _WORD.findall(folded.casefold())


def index_terms(text: str | None) -> list[str]:
    """The terms the keyword index stores for ``text``, in order: the stems of its words.

    Each word of ``index_words`` through ``spaceduck.core.stemming.stem`` ("hiking" -> "hike",
    "met" -> "meet"); a query's words go through the same function.
    """
    return [stem(word) for word in index_words(text)]


def namespace_key(namespace: str) -> str:
    """A fixed-length token prefix for the namespace (10 hex digits of its BLAKE2b hash)."""
    digest = hashlib.blake2b(namespace.encode("utf-8"), digest_size=NAMESPACE_KEY_LENGTH // 2)
    return digest.hexdigest()


def namespaced_terms(namespace: str | None, text: str | None) -> str:
    """``text`` as the keyword index's document: each term (``index_terms``, the stem of a
    word) prefixed with the namespace key.

    Registered as the SQL function ``spaceduck_terms(namespace, text)`` on every
    connection (spaceduck.core.db.backend) and called by the index's triggers, so
    each namespace has its own postings: a query reads only its namespace's
    documents, and BM25's document frequencies are the namespace's own.
    """
    key = namespace_key(namespace or "")
    return " ".join(key + term for term in index_terms(text))
