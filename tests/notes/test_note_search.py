"""Lazy note search: opt-in per namespace kind, literal queries, BM25, the read contract."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from notes.models import Note
from notes.selectors import NoteSearchNotEnabled, search_note_hits, search_notes
from notes.services import enable_note_search, save_note, set_note_status
from spaceduck.core.errors import InvalidInput

pytestmark = pytest.mark.django_db

NS = "user:alice"

HOSTILE_QUERIES = [
    '"',
    '"cafe',
    'cafe"',
    '""',
    "'",
    ":",
    "body:cafe",
    "body : cafe",
    "*",
    "caf*",
    "NOT",
    "NOT cafe",
    "cafe NOT lait",
    "AND",
    "OR",
    "cafe OR",
    "NEAR",
    "cafe NEAR lait",
    "NEAR(cafe lait, 2)",
    "(",
    ")",
    "(cafe",
    "cafe)",
    "{",
    "}",
    "{body}: cafe",
    "^",
    "^cafe",
    "-",
    "-cafe",
    "cafe -lait",
    "a-b",
    "\x00",
    "cafe\x00lait",
    "\ud800",
    "cafe \ud800",
    "\udfff\ud800",
    "",
    " ",
    "\t\n  ",
    "+",
    "cafe + lait",
    "%",
    "%s",
    "?",
    ";DROP TABLE notes_note;--",
    "rowid",
    "rank",
    "notes_fts",
    "x" * 10_000,
    " ".join(["cafe"] * 100),
]


def fts_rows() -> int:
    """Notes in the search index: FTS5's one %_docsize row per document, or PostgreSQL's
    one tsvector row per note."""
    table = "notes_fts_docsize" if connection.vendor == "sqlite" else "notes_fts"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return int(cursor.fetchone()[0])


def fts_integrity_check() -> None:
    """FTS5's own check that the index matches the notes (PostgreSQL's index is a table
    of rows the trigger writes: fts_rows counts it)."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO notes_fts(notes_fts) VALUES ('integrity-check')")


def found(query: str, **kwargs: object) -> list[str]:
    return [note.uid for note in search_notes("user", query, **kwargs)]  # type: ignore[arg-type]


# --- enabling -------------------------------------------------------------------


def test_nothing_is_indexed_until_search_is_enabled_for_the_kind() -> None:
    save_note(NS, "restart the worker")
    save_note("agent:bot", "restart the worker")
    assert fts_rows() == 0


def test_searching_a_kind_that_is_not_enabled_is_a_clear_error() -> None:
    save_note(NS, "restart the worker")
    with pytest.raises(NoteSearchNotEnabled, match=r"not enabled.*enable_note_search\('user'\)"):
        search_notes("user", "worker")
    assert issubclass(NoteSearchNotEnabled, InvalidInput)


@pytest.mark.parametrize("kind", ["users", "", "note", None, "user:*"])
def test_an_unknown_kind_is_refused(kind: object) -> None:
    with pytest.raises(InvalidInput, match="namespace kind"):
        enable_note_search(kind)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="namespace kind"):
        search_notes(kind, "x")  # type: ignore[arg-type]


def test_enabling_backfills_existing_notes_of_the_kind_only() -> None:
    save_note(NS, "restart the worker", id="a")
    save_note("user:bob", "the worker is flaky", id="b")
    save_note("agent:bot", "worker notes of an agent", id="c")
    result = enable_note_search("user")
    assert (result.kind, result.newly_enabled, result.backfilled) == ("user", True, 2)
    assert fts_rows() == 2
    assert sorted(found("worker")) == ["a", "b"]
    fts_integrity_check()


def test_notes_saved_after_enabling_are_indexed_on_save() -> None:
    enable_note_search("user")
    save_note(NS, "rotate the logs", id="later")
    assert found("logs") == ["later"]
    fts_integrity_check()


def test_enabling_twice_is_idempotent_and_indexes_nothing_twice() -> None:
    save_note(NS, "restart the worker", id="a")
    enable_note_search("user")
    again = enable_note_search("user")
    assert (again.newly_enabled, again.backfilled) == (False, 0)
    assert fts_rows() == 1
    assert found("worker") == ["a"]
    fts_integrity_check()


def test_status_changes_do_not_touch_the_index() -> None:
    enable_note_search("user")
    save_note(NS, "restart the worker", status="pending", id="a")
    set_note_status("a", "accepted", by="reviewer")
    assert fts_rows() == 1
    assert found("worker") == ["a"]
    fts_integrity_check()


# --- literal queries -------------------------------------------------------------


@pytest.fixture
def corpus() -> None:
    enable_note_search("user")
    save_note(NS, "café au lait", id="cafe-lait")
    save_note(NS, "the cafe is not near the station", id="not-near")
    save_note(NS, "body: cafe on the wall", id="body-cafe")
    save_note(NS, "a-b testing plan", id="a-b")
    save_note(NS, "caf is a word here", id="caf")


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_hostile_queries_are_literal_text_and_never_crash(query: str) -> None:
    results = search_notes("user", query)
    assert isinstance(results, list)
    assert all(isinstance(note, Note) for note in results)


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("NOT cafe", ["not-near"]),  # NOT is a word to find, not an operator
        ("cafe NEAR", ["not-near"]),
        ("NEAR(cafe station, 10)", []),  # as an operator it would match "not-near"
        ("near(the station)", ["not-near"]),  # the phrase "near the", then "station"
        ("caf*", ["caf"]),  # no prefix query: "caf" only
        ("body:cafe", ["body-cafe"]),  # no column filter: the phrase "body cafe"
        ("-cafe", ["body-cafe", "cafe-lait", "not-near"]),  # not an exclusion
        ("^cafe", ["body-cafe", "cafe-lait", "not-near"]),
        ('"cafe', ["body-cafe", "cafe-lait", "not-near"]),
        ("{cafe}", ["body-cafe", "cafe-lait", "not-near"]),
        ("(lait)", ["cafe-lait"]),
        ("a-b", ["a-b"]),
        ("cafe\x00lait", ["cafe-lait"]),
        ("lait \ud800", ["cafe-lait"]),
    ],
)
def test_query_syntax_characters_are_just_text(query: str, expected: list[str]) -> None:
    assert sorted(found(query)) == expected


@pytest.mark.parametrize(
    "query",
    [
        "cafe\u0301",  # "e" + a combining acute accent (macOS keyboards, many pastes)
        "café",
        "CAFÉ",
        "cafe",
        "\uff43\uff41\uff46\uff45",  # fullwidth letters (NFKC: "cafe")
        "cafe\u0301 au lait",
    ],
)
def test_unicode_forms_of_a_word_find_the_same_notes_on_either_database(query: str) -> None:
    enable_note_search("user")
    save_note(NS, "café au lait", id="composed")
    save_note(NS, "cafe\u0301 noir", id="decomposed")  # the note stored with the mark apart
    save_note(NS, "a cafe by the sea", id="plain")
    expected = ["composed"] if "lait" in query else ["composed", "decomposed", "plain"]
    assert sorted(found(query)) == expected


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("query", ["", " ", "\t\n", "\x00", "\ud800", "* : ^ - ( ) { }", '""'])
def test_an_empty_or_whitespace_query_returns_nothing(query: str) -> None:
    assert search_notes("user", query) == []


@pytest.mark.usefixtures("corpus")
def test_all_words_must_match() -> None:
    assert found("cafe station") == ["not-near"]
    assert found("cafe station elephant") == []


def test_diacritics_match_both_ways_and_case_is_ignored() -> None:
    enable_note_search("user")
    save_note(NS, "Rendez-vous au Café", id="accent")
    save_note(NS, "cheap cafe downstairs", id="plain")
    assert sorted(found("cafe")) == ["accent", "plain"]
    assert sorted(found("café")) == ["accent", "plain"]
    assert sorted(found("CAFÉ")) == ["accent", "plain"]
    assert found("naïve") == []
    save_note(NS, "a naive approach", id="naive")
    assert found("naïve") == ["naive"]


def test_cjk_text_matches_as_unicode61_tokenizes_it() -> None:
    enable_note_search("user")
    save_note(NS, "会议 在 東京 举行", id="tokyo")
    save_note(NS, "東京タワー", id="tower")
    # unicode61 splits on spaces and punctuation, not between CJK characters.
    assert found("東京") == ["tokyo"]
    assert found("東京タワー") == ["tower"]
    assert found("会议 東京") == ["tokyo"]


def test_a_query_for_a_non_string_is_refused() -> None:
    enable_note_search("user")
    with pytest.raises(InvalidInput, match="query"):
        search_notes("user", 5)  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [0, -1, 201, 10**30, True, "10", 2.5])
def test_an_out_of_range_limit_is_refused(limit: object) -> None:
    enable_note_search("user")
    with pytest.raises(InvalidInput, match="limit"):
        search_notes("user", "x", limit=limit)  # type: ignore[arg-type]


# --- ranking, scope, read contract ------------------------------------------------


def test_results_are_in_bm25_order() -> None:
    enable_note_search("user")
    save_note(NS, "worker mentioned once among many other unrelated words here", id="weak")
    save_note(NS, "worker worker worker", id="strong")
    save_note(NS, "the worker restarts", id="middle")
    assert found("worker") == ["strong", "middle", "weak"]
    scores = [hit.score for hit in search_note_hits("user", "worker")]
    assert scores == sorted(scores, reverse=True)


def test_search_honours_the_read_contract() -> None:
    enable_note_search("user")
    save_note(NS, "deploy on monday", id="old")
    save_note(NS, "deploy on tuesday", supersedes=["old"], id="new")
    save_note(NS, "deploy on friday", status="pending", supersedes=["new"], id="proposal")
    save_note(NS, "deploy never", status="rejected", id="rejected")
    assert found("deploy") == ["new"]
    assert sorted(found("deploy", status="any")) == ["new", "proposal", "rejected"]
    assert found("deploy", status="pending") == ["proposal"]
    assert sorted(found("deploy", include_superseded=True)) == ["new", "old"]
    set_note_status("proposal", "accepted", by="reviewer")
    assert found("deploy") == ["proposal"]


def test_search_spans_every_namespace_of_the_kind_unless_one_is_given() -> None:
    enable_note_search("user")
    save_note(NS, "shared word", id="alice")
    save_note("user:bob", "shared word", id="bob")
    assert sorted(found("shared")) == ["alice", "bob"]
    assert found("shared", namespace="user:bob") == ["bob"]
    assert sorted(found("shared", namespaces=["user:bob", "user:alice"])) == ["alice", "bob"]
    assert found("shared", namespaces=["user:bob"]) == ["bob"]
    assert found("shared", namespaces=[]) == []


def test_a_namespace_of_another_kind_is_refused() -> None:
    enable_note_search("user")
    with pytest.raises(InvalidInput, match="not of kind"):
        search_notes("user", "x", namespace="agent:bot")
    with pytest.raises(InvalidInput, match="namespace"):
        search_notes("user", "x", namespace="user:a:b")


def test_search_never_crosses_namespace_kinds() -> None:
    enable_note_search("user")
    enable_note_search("agent")
    save_note(NS, "shared word", id="user-note")
    save_note("agent:bot", "shared word", id="agent-note")
    save_note("workflow:w", "shared word", id="workflow-note")
    assert found("shared") == ["user-note"]
    assert [n.uid for n in search_notes("agent", "shared")] == ["agent-note"]
    with pytest.raises(NoteSearchNotEnabled):
        search_notes("workflow", "shared")


def test_a_full_page_of_live_notes_comes_back_when_the_best_matches_are_hidden() -> None:
    enable_note_search("user")
    # 130 hidden notes, short and dense in the term, rank above every live note.
    superseded = [save_note(NS, "alpha alpha alpha").uid for _ in range(60)]
    for status in ["pending"] * 40 + ["rejected"] * 30:
        save_note(NS, "alpha alpha alpha", status=status)
    superseder = save_note(NS, "alpha " + "filler " * 30, supersedes=superseded).uid
    live = [save_note(NS, f"alpha word {n} " + "pad " * n).uid for n in range(15)]
    with CaptureQueriesContext(connection) as queries:
        page = found("alpha", limit=10)
    assert page == live[:10]  # the best live ones, in BM25 order
    search = "MATCH" if connection.vendor == "sqlite" else "@@"
    fts_queries = [q for q in queries.captured_queries if search in q["sql"]]
    assert len(fts_queries) > 1  # the first capped FTS list was not enough
    everything = found("alpha", limit=200)
    assert everything == [*live, superseder]


def test_a_page_is_short_only_when_there_are_no_more_live_matches() -> None:
    enable_note_search("user")
    for _ in range(70):
        save_note(NS, "beta beta", status="pending")
    live = [save_note(NS, f"beta {n} " + "pad " * n).uid for n in range(3)]
    assert found("beta", limit=10) == live
