"""Stems in the memories keyword index: one stemmer for index and query, per namespace."""

from __future__ import annotations

import string
import threading
from unicodedata import decomposition

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.recall.hybrid import keyword_list
from memories.store import keyword_index
from memories.store.keyword_index import keyword_terms
from memories.write.services import memory_create
from spaceduck.core.fts import index_terms, index_words, namespace_key, namespaced_terms
from spaceduck.core.stemming import IRREGULAR, stem

# --- The stemmer -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "term"),
    [
        (["dog", "dogs"], "dog"),
        (["hike", "hikes", "hiked", "hiking"], "hike"),
        (["meet", "meets", "meeting", "met"], "meet"),
        (["paint", "paints", "painted", "painting"], "paint"),
        (["go", "goes", "going", "went", "gone"], "go"),
        (["child", "children"], "child"),
        (["mouse", "mice"], "mous"),
        (["buy", "buys", "buying", "bought"], "buy"),
    ],
)
def test_inflections_share_one_stem(words: list[str], term: str) -> None:
    assert {stem(word) for word in words} == {term}


def test_numbers_and_short_words_are_left_alone() -> None:
    for word in ["42", "2024", "1990s", "x", "ab", "is", "cern", "ü", "中文"]:
        assert stem(word) == word


def test_ambiguous_irregular_forms_are_not_mapped() -> None:
    assert stem("left") == "left"  # leave, or the side
    assert stem("found") == "found"  # find, or to found ("founded" is "found")
    assert not set(IRREGULAR) & set(IRREGULAR.values())  # a base is never mapped again


def test_a_stem_is_a_single_index_word() -> None:
    # What keyword_index.phrase relies on. Snowball may end a stem in an ASCII letter
    # ("happy" -> "happi") or cut a suffix, so try the letters that fold (as in
    # tests/test_api_errors.py) inside words with English endings.
    words = ["happy", "agreed", "skis", "dying", "generously", "ies", "sses"]
    for code in range(0x80, 0x3000):
        char = chr(code)
        if decomposition(char) or char.casefold() != char or char.isalpha():
            for ending in ("s", "ies", "y", "ing", "ed", "ly"):
                words.extend(index_words(f"a{char}{ending}"))
                words.extend(index_words(f"{char}{ending}"))
    words.extend(a + b for a in string.ascii_lowercase for b in string.ascii_lowercase)
    for word in words:
        assert index_words(stem(word)) == [stem(word)], word


def test_each_thread_has_its_own_stemmer() -> None:
    stem.cache_clear()
    words = [f"walking{n}s" for n in range(2000)] + ["walking", "walked"] * 500
    results: list[list[str]] = []

    def run() -> None:
        results.append([stem(word) for word in words])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(result == results[0] for result in results)
    assert results[0][-2:] == ["walk", "walk"]


def test_the_index_document_holds_namespaced_stems() -> None:
    key = namespace_key("user:alice")
    assert namespaced_terms("user:alice", "Alice's dogs went hiking") == " ".join(
        key + term for term in ["alic", "s", "dog", "go", "hike"]
    )
    assert index_terms("Café MEETINGS") == ["cafe", "meet"]


def test_query_terms_are_exact_stems_without_stopwords() -> None:
    assert keyword_terms("Where did she go hiking with the dogs?") == [
        ("go", False),
        ("hike", False),
        ("dog", False),
    ]
    assert keyword_terms("paints painted painting") == [("paint", False)]
    assert keyword_terms("the") == [("the", False)]  # only stopwords: they are kept


# --- Recall through the index ---------------------------------------------------------


def add(content: str, namespace: str = "user:alice") -> int:
    return memory_create(namespace=namespace, kind="fact", content=content, actor="t").pk


def found(text: str, namespace: str = "user:alice") -> set[int]:
    return {memory_id for memory_id, _ in keyword_list(namespace, text, 50)}


@pytest.mark.django_db
def test_recall_matches_inflections_and_irregular_forms() -> None:
    dog = add("Alice adopted a dog last spring.")
    hiked = add("Alice hiked the Pacific Crest Trail.")
    hikes = add("Bob hikes every weekend.")
    hike = add("The hike up Mount Tam took four hours.")
    meeting = add("The meeting with the landlord is on Friday.")
    meet = add("Alice will meet Carol in Lisbon.")
    paints = add("Alice paints watercolours.")
    painted = add("Alice painted the kitchen blue.")
    add("Alice drinks green tea.")

    assert found("dogs") == {dog}
    assert found("hiking") == {hiked, hikes, hike}
    assert found("met") == {meeting, meet}
    assert found("painting") == {paints, painted}
    assert keyword_index.matching_ids("user:alice", "dogs") == [dog]


@pytest.mark.django_db
def test_a_stem_never_leaks_across_namespaces() -> None:
    alice = add("Alice paints watercolours.")
    bob = add("Bob painted the fence.", namespace="user:bob")
    assert found("painting") == {alice}
    assert found("painting", "user:bob") == {bob}
    assert found("painting", "user:carol") == set()
    assert keyword_index.matching_ids("user:carol", "paint") == []


@pytest.mark.django_db
def test_a_stem_does_not_match_as_a_prefix() -> None:
    add("Alice keeps her car in the garage.")
    card = add("Alice lost her library card.")
    assert found("cards") == {card}
    assert found("car") != found("cards")


# --- Migration 0015: an index of whole words is rebuilt with stems --------------------


def unstemmed_terms(namespace: str | None, text: str | None) -> str:
    """spaceduck_terms before stemming (what migrations 0008 to 0014 indexed)."""
    key = namespace_key(namespace or "")
    return " ".join(key + word for word in index_words(text))


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_only
def test_the_migration_reindexes_existing_memories_with_stems(
    migrator: MigrationExecutor,
) -> None:
    migrator.migrate([("memories", "0014_namespace_counts")])
    connection.ensure_connection()
    raw = connection.connection
    raw.create_function("spaceduck_terms", 2, unstemmed_terms, deterministic=True)
    # Rows as the schema at 0014 holds them (today's model has columns added since).
    at_0014 = migrator.loader.project_state(("memories", "0014_namespace_counts")).apps
    old_memory = at_0014.get_model("memories", "Memory")

    def add_at_0014(content: str, namespace: str = "user:alice") -> int:
        row = old_memory.objects.create(
            namespace=namespace, kind="fact", content=content, content_hash=content
        )
        return int(row.pk)

    try:
        dogs = add_at_0014("Alice walks her dogs before work.")
        other = add_at_0014("Bob went hiking.", namespace="user:bob")
    finally:
        raw.create_function("spaceduck_terms", 2, namespaced_terms, deterministic=True)
    assert found("dogs") == set()  # the old index holds "dogs", the query asks for "dog"

    migrator.loader.build_graph()
    migrator.migrate([("memories", "0015_fts_stems")])

    assert found("dogs") == {dogs}
    assert found("walking") == {dogs}
    assert found("hike", "user:bob") == {other}
    assert found("hike") == set()
    assert keyword_index.count_rows() == 2
    assert sorted(keyword_index.matching_ids("user:alice", "dog")) == [dogs]


def test_ascii_text_is_split_as_the_unicode_rule_splits_it() -> None:
    """index_words' ASCII fast path gives the words the general rule gives."""
    import random
    import re
    import string

    general = re.compile(r"[^\W_]+")
    rng = random.Random(7)
    alphabet = string.printable
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert index_words(text) == general.findall(text.casefold()), text
