"""Find everything about a person (issue 37, item 4): a name held in any field that stores
text is found by the People page, in its own kind, with a link, in its namespace; and
``manage.py erase --dry-run`` lists what an erase would remove, erasing nothing.

Each case writes a distinctive string into one field only, through the services every
front end calls, in a namespace of its own.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from memories.models import Conflict, Extraction, Memory, MemoryEvent
from memories.write.ingest import message_ingest
from memories.write.lifecycle import memory_edit
from memories.write.services import create_thread, memory_create, set_fact
from notes.models import NoteSupersession
from notes.services import save_note
from spaceduck.models import NamespaceErasure
from spaceduck.ops.erasure import KINDS, erase_namespace, stored_counts
from spaceduck.ops.people import KINDS as SEARCH_KINDS

pytestmark = pytest.mark.django_db

NAME = "Quillonby"  # distinctive: no seeded text holds it
HTMX = {"HX-Request": "true"}


def _memory(ns: str, **fields: Any) -> str:
    memory = memory_create(namespace=ns, kind="fact", content="Likes tea.", actor="t", **fields)
    return f"/memories/{memory.pk}/"


def _thread_title(ns: str, text: str) -> str:
    return f"/threads/{create_thread(ns, title=f'Plans with {text}').id}/"


def _message(ns: str, **fields: Any) -> str:
    thread = create_thread(ns)
    content = fields.pop("content", "See you at noon.")
    message_ingest(thread.id, "user", content, **fields)
    return f"/threads/{thread.id}/"


def _fact(ns: str, key: str, value: Any, **fields: Any) -> str:
    set_fact(ns, key, value, **fields)
    return "/facts/?namespace=" + ns.replace(":", "%3A")


def _note(ns: str, **fields: Any) -> str:
    body = fields.pop("body", "Prefers mornings.")
    note = save_note(ns, body, **fields)
    return f"/notes/{note.uid}/"


def _extraction(ns: str, **fields: Any) -> str:
    record = Extraction.objects.create(namespace=ns, status="done", **fields)
    return f"/extractions/{record.pk}/"


def _history(ns: str, text: str) -> str:
    memory = memory_create(namespace=ns, kind="fact", content=f"{text} likes tea.", actor="t")
    memory_edit(memory=memory, changes={"content": "Someone likes tea."}, actor="t")
    return f"/memories/{memory.pk}/"


# (case, kind it is found as, writer: (namespace, text) -> the link the hit must carry)
PLACES: list[tuple[str, str, Callable[[str, str], str]]] = [
    ("thread title", "threads", _thread_title),
    ("memory content", "memories", lambda ns, t: _content(ns, t)),
    ("memory title", "memories", lambda ns, t: _memory(ns, title=f"About {t}")),
    ("memory summary", "memories", lambda ns, t: _memory(ns, summary=f"Told by {t}.")),
    ("memory tags", "memories", lambda ns, t: _memory(ns, tags=["family", t.lower()])),
    ("memory context", "memories", lambda ns, t: _memory(ns, context=f"Said to {t}.")),
    ("memory history", "history", _history),
    ("fact key", "facts", lambda ns, t: _fact(ns, f"friend/{t.lower()}", "best friend")),
    ("fact value", "facts", lambda ns, t: _fact(ns, "friend/best", {"name": t})),
    ("fact provenance", "facts", lambda ns, t: _fact(ns, "pet", "cat", provenance={"by": t})),
    ("message content", "messages", lambda ns, t: _message(ns, content=f"I am {t}.")),
    (
        "message provenance",
        "messages",
        lambda ns, t: _message(ns, provenance={"tool_args": f"--user {t}"}),
    ),
    ("note body", "notes", lambda ns, t: _note(ns, body=f"{t} prefers mornings.")),
    ("note tags", "notes", lambda ns, t: _note(ns, tags=[t.lower()])),
    ("note provenance", "notes", lambda ns, t: _note(ns, provenance={"source": t})),
    (
        "extraction candidate",
        "extractions",
        lambda ns, t: _extraction(
            ns,
            candidates=[{"candidate": {"content": f"{t} keeps bees."}, "decision": "rejected"}],
        ),
    ),
    (
        "extraction error",
        "extractions",
        lambda ns, t: _extraction(ns, errors=[{"attempt": 1, "error": f"bad input: {t}"}]),
    ),
]


def _content(ns: str, text: str) -> str:
    memory = memory_create(namespace=ns, kind="fact", content=f"{text} likes tea.", actor="t")
    return f"/memories/{memory.pk}/"


def sections(html: str) -> dict[str, str]:
    """Each kind's section of the results, by kind."""
    parts = re.split(r'<section class="people-kind" id="people-', html)[1:]
    return {part.split('"', 1)[0]: part.split("</section>", 1)[0] for part in parts}


def namespaces_listed(html: str) -> list[str]:
    listed = html.split('class="people-namespaces"', 1)
    return (
        re.findall(r"<code>([^<]*)</code>", listed[1].split("</ul>", 1)[0])
        if len(listed) > 1
        else []
    )


@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
@pytest.mark.parametrize(("case", "kind", "write"), PLACES, ids=[p[0] for p in PLACES])
def test_a_name_held_in_one_field_is_found_in_its_kind(
    staff_client: Client, case: str, kind: str, write: Callable[[str, str], str], htmx: bool
) -> None:
    ns = "user:" + case.replace(" ", "-")
    link = write(ns, NAME)
    create_thread("user:other", title="Unrelated")  # another namespace, holding nothing of it
    for query in (NAME, NAME.upper(), NAME.lower()[2:7]):
        response = staff_client.get("/people/", {"q": query}, headers=HTMX if htmx else {})
        assert response.status_code == 200
        html = response.content.decode()
        assert ('<nav id="site-nav"' in html) is not htmx
        found = sections(html)
        assert set(found) == set(SEARCH_KINDS)
        assert 'class="people-hit"' in found[kind], (case, query)
        assert f'href="{link}' in found[kind].replace("&amp;", "&"), (case, link)
        assert NAME.lower() in found[kind].lower()
        assert namespaces_listed(html) == [ns], case


def test_a_hit_names_the_field_and_shows_the_text_around_the_match(staff_client: Client) -> None:
    long_summary = "word " * 200 + f"{NAME} was here. " + "word " * 200
    _memory("user:long", summary=long_summary)
    html = staff_client.get("/people/", {"q": NAME}).content.decode()
    memories = sections(html)["memories"]
    assert "summary:" in memories
    assert f"{NAME} was here." in memories  # the excerpt starts near the match
    cell = re.search(r'<td class="content" data-label="What">(.*?)</td>', memories, re.S)
    assert cell is not None
    assert len(cell[1]) < 400


@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_a_non_ascii_name_is_found_in_json_fields_in_any_common_casing(
    staff_client: Client, htmx: bool
) -> None:
    """SQLite stores JSON with non-ASCII escaped (\\u00eb) and folds ASCII case only;
    PostgreSQL matches jsonb as text: the name is found in both, in a fact's value and a
    message's provenance, as typed, in lower and in upper case."""
    name = "Zoë Ødegård"
    _fact("user:zoe", "friend/best", {"name": name})
    _message("user:zoe", provenance={"tool_args": f"--user '{name}'"})
    _thread_title("user:zoe", name)
    for query in (name, name.lower(), name.upper(), "Ødegård"):
        html = staff_client.get("/people/", {"q": query}, headers=HTMX if htmx else {})
        found = sections(html.content.decode())
        for kind in ("facts", "messages", "threads"):
            assert 'class="people-hit"' in found[kind], (kind, query)
            assert name in found[kind], (kind, query)


@pytest.mark.parametrize(
    "query",
    [
        "%",
        "_",
        "%_%",
        "100%",
        "a_b",
        "'",
        '"',
        "O'Brien\"; DROP TABLE memories_memory; --",
        "\\",
        "\\u00eb",
        "[a-z]*",
        "{}",
        '{"name":',
        "\u202e",
        "x" * 200,
        "ë" * 200,
    ],
)
def test_hostile_searches_do_not_fail(staff_client: Client, query: str) -> None:
    _fact("user:hostile", "k", {"name": '100% a_b O\'Brien "quoted" back\\slash'})
    for headers in ({}, HTMX):
        response = staff_client.get("/people/", {"q": query}, headers=headers)
        assert response.status_code in (200, 422), query


@pytest.mark.parametrize(
    ("query", "reason"),
    [("ë" * 201, "at most 200"), ("\x00", "control characters"), ("a\x1bb", "control characters")],
)
def test_a_search_too_long_or_with_control_characters_is_refused_with_a_reason(
    staff_client: Client, query: str, reason: str
) -> None:
    for headers in ({}, HTMX):
        response = staff_client.get("/people/", {"q": query}, headers=headers)
        assert response.status_code == 422
        assert reason in response.content.decode()


def test_literal_wildcards_and_quotes_find_only_what_holds_them(staff_client: Client) -> None:
    _fact("user:hostile", "k", {"name": '100% a_b O\'Brien "quoted" back\\slash'})
    _fact("user:plain", "k", "nothing special here")
    for query in ("100%", "a_b", "O'Brien", '"quoted"', "back\\slash"):
        html = staff_client.get("/people/", {"q": query}).content.decode()
        assert namespaces_listed(html) == ["user:hostile"], query
    for query in ("%", "_"):
        html = staff_client.get("/people/", {"q": query}).content.decode()
        assert "user:plain" not in namespaces_listed(html), query


def test_namespaces_holding_the_name_beyond_the_first_page_are_listed(
    staff_client: Client,
) -> None:
    """A common string fills a kind's first page from one namespace: the namespaces list
    still names every namespace holding it (an erase request needs them all)."""
    for i in range(25):
        _content("user:many", f"{NAME} {i}")
    _content("user:one-more", NAME)  # the oldest: not on the first page
    html = staff_client.get("/people/", {"q": NAME}).content.decode()
    assert html.count('class="people-hit"') == 20
    assert namespaces_listed(html) == ["user:many", "user:one-more"]


# --- erase --dry-run ------------------------------------------------------------------------


def seed_everything(ns: str) -> None:
    for _, _, write in PLACES:
        write(ns, NAME)
    first, second = (_content(ns, f"{NAME} {i}") for i in (1, 2))
    Conflict.objects.create(
        namespace=ns, old_id=_id(first), new_id=_id(second), reason=f"{NAME} said both"
    )
    old = save_note(ns, "Old note.", id=f"{ns}-old")
    save_note(ns, "New note.", supersedes=[old.uid], id=f"{ns}-new")


def _id(link: str) -> int:
    return int(link.strip("/").rsplit("/", 1)[1])


def test_erase_dry_run_lists_counts_by_kind_and_erases_nothing() -> None:
    seed_everything("user:quill")
    seed_everything("user:other")
    before = stored_counts("user:quill")
    out = io.StringIO()
    call_command("erase", "user:quill", "--dry-run", stdout=out)
    text = out.getvalue()
    assert text.startswith("Erasing user:quill would remove ")
    for kind in KINDS:
        assert re.search(rf"^  {kind} +{before[kind]}$", text, re.M), kind
    assert "nothing was erased" in text
    assert stored_counts("user:quill") == before
    assert not NamespaceErasure.objects.exists()
    # The counts are what the erase then records on its tombstone, and nothing the
    # search could find is left.
    erasure = erase_namespace("user:quill", by="test")
    assert erasure.counts == before
    assert all(n > 0 for n in before.values()), before
    assert not any(stored_counts("user:quill").values())
    assert not NoteSupersession.objects.filter(note__namespace="user:quill").exists()
    assert not MemoryEvent.objects.filter(namespace="user:quill").exists()
    assert stored_counts("user:other") == before  # another namespace untouched


def test_erase_dry_run_without_input_and_of_an_empty_or_malformed_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_input(prompt: str) -> str:
        raise AssertionError("a dry run asks nothing")

    monkeypatch.setattr("builtins.input", no_input)
    out = io.StringIO()
    call_command("erase", "user:nobody", "--dry-run", stdout=out)  # exit 0
    assert "user:nobody holds nothing: an erase would remove nothing." in out.getvalue()
    with pytest.raises(CommandError, match="invalid namespace"):
        call_command("erase", "nobody", "--dry-run", stdout=io.StringIO())


def test_after_an_erase_the_people_page_finds_nothing_of_any_kind(staff_client: Client) -> None:
    seed_everything("user:quill")
    html = staff_client.get("/people/", {"q": NAME}).content.decode()
    assert all('class="people-hit"' in section for section in sections(html).values())
    call_command("erase", "user:quill", "--yes", stdout=io.StringIO())
    html = staff_client.get("/people/", {"q": NAME}).content.decode()
    assert 'class="people-hit"' not in html
    assert namespaces_listed(html) == []
    assert not Memory.objects.filter(namespace="user:quill").exists()


def test_an_erase_forgets_admin_log_entries_about_history_and_note_edges() -> None:
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.auth import get_user_model
    from django.contrib.contenttypes.models import ContentType

    seed_everything("user:quill")
    user = get_user_model().objects.create(username="log-writer")
    for row in (
        MemoryEvent.objects.filter(namespace="user:quill").first(),
        NoteSupersession.objects.filter(note__namespace="user:quill").first(),
    ):
        assert row is not None
        LogEntry.objects.create(
            content_type=ContentType.objects.get_for_model(row),
            object_id=str(row.pk),
            object_repr=f"{NAME}: {row}",
            action_flag=CHANGE,
            user_id=user.pk,
        )
    erase_namespace("user:quill", by="test")
    assert not LogEntry.objects.filter(object_repr__contains=NAME).exists()
