"""The fragment rule judges structure (subject + finite verb, auxiliaries, imperatives) against
a full English verb lexicon, not a list of verbs someone thought of.

tests/data/firewall/statements.json holds hand-written complete sentences across topics,
tenses and forms; every one must pass the guard. Fragments must still be refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories.extraction.guard import check
from memories.extraction.sentences import is_known_word, is_sentence
from memories.extraction.types import Candidate, Source
from tests.conftest import Actor

STATEMENTS_FILE = Path(__file__).parents[2] / "data" / "firewall" / "statements.json"
USER = Source(role="user", text="hello there")
REPORTED = [
    "The CI pipeline compiles the frontend nightly.",
    "Our nightly job backs up the database to S3.",
    "Grafana scrapes the exporter every 15 seconds.",
    "My router forwards port 22 to the NAS.",
]


def fact(content: str) -> Candidate:
    return Candidate(kind="fact", content=content)


def statements() -> list[str]:
    data = json.loads(STATEMENTS_FILE.read_text())
    return [s for topic, items in data.items() if topic != "about" for s in items]


def test_the_corpus_is_large_varied_and_has_no_repeats() -> None:
    data = json.loads(STATEMENTS_FILE.read_text())
    every = statements()
    assert len(every) >= 300
    assert len(set(every)) == len(every)
    topics = set(data) - {"about"}
    assert {"ops", "code", "science", "family", "hobbies", "business", "health"} <= topics
    assert {"travel", "food", "grammar"} <= topics
    assert all(len(data[topic]) >= 25 for topic in topics)
    assert set(REPORTED) <= set(every)


@pytest.mark.parametrize("content", statements())
def test_every_complete_sentence_passes_the_guard(content: str) -> None:
    assert check(fact(content), USER) is None


@pytest.mark.parametrize(
    "content",
    [
        "the blue car",
        "Kubernetes cluster config",
        "and then the",
        "The blue notebook on the desk.",
        "Something nice in the morning.",
        "The user's favourite colour",
        "Paris, France",
        "the new dashboard",
        "a list of open tickets",
        "my old laptop from work",
        "Grafana dashboards for the API",
        "the dog's favourite toy",
        "Production database backups",
        "three large pizzas",
        "the red bicycle in the garage",
        "Berlin office address",
        "the deploy pipeline",
        "Chapter 3, section 2",
        "lots of fun",
        "blue or green",
        "late at night",
        "with extra cheese",
        "Because the deploy failed.",
        "If the tests fail",
        "And the user likes tea.",
    ],
)
def test_fragments_are_still_refused(content: str) -> None:
    assert check(fact(content), USER) == "fragment"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("Does the CI pipeline compile the frontend nightly?", "question"),
        ("Where does the nightly job back up the database", "question"),
        ("The user's email is unknown.", "poison_value"),
        ("The deploy key is N/A.", "poison_value"),
    ],
)
def test_questions_and_placeholders_are_still_refused(content: str, reason: str) -> None:
    assert check(fact(content), USER) == reason


@pytest.mark.parametrize(
    "text",
    [
        # Forms no word list had: -s, -es, -ed, irregular pasts, bare plurals, unknown words.
        "The baby cries at night.",
        "She fixes radios.",
        "The parcel arrived damaged.",
        "The river froze last winter.",
        "Engineers review each pull request.",
        "My partner and I share a car.",
        "Our team upserts rows nightly.",
        "The job dockerized the legacy app.",
        "Mitochondria produce most of the cell's energy.",
        # Adverbs and hedges between subject and verb.
        "The user absolutely loves fresh bread.",
        "The user kind of likes jazz.",
        "The user and their team never deploy on Fridays.",
        # Imperatives, also after a comma or "then", and prohibitions.
        "Use metric units.",
        "Stop apologizing so much.",
        "Where possible, use UTC timestamps.",
        "To deploy, first run make build, then make push, and finally tag the release.",
        "No merges after 4pm on release days.",
        # Diary style.
        "Moved to Amsterdam in May.",
    ],
)
def test_is_sentence_reads_structure(text: str) -> None:
    assert is_sentence(text)


def test_known_words_are_the_lexicon_plus_function_words() -> None:
    assert is_known_word("the")
    assert is_known_word("project")
    assert is_known_word("compiles")
    assert not is_known_word("grafana")


@pytest.mark.parametrize("content", REPORTED)
def test_the_reported_sentences_are_stored_over_http(owner: Actor, content: str) -> None:
    response = owner.post(
        "/api/memories", {"namespace": "user:alice", "kind": "fact", "content": content}
    )
    assert response.status_code == 201, response.json()
    assert response.json()["decision"] == "stored"


@pytest.mark.parametrize("content", ["the blue car", "Kubernetes cluster config"])
def test_fragments_are_refused_over_http(owner: Actor, content: str) -> None:
    response = owner.post(
        "/api/memories", {"namespace": "user:alice", "kind": "fact", "content": content}
    )
    assert response.json()["decision"] == "rejected"
    assert "fragment" in response.json()["reason"]
