"""Names that cannot hide (issue 37, item 6): namespaces are NFC-normalised and refuse
control, format (zero-width, soft hyphen, bidirectional) and other invisible characters,
on every front end; a system check lists names stored before; a note's author is the
token's identity or a name under it, ``staff:`` being the people's."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from memories.models import Fact, Memory, Thread
from memories.write.services import create_thread, set_fact
from notes.models import Note
from spaceduck.core.namespaces import (
    NAMESPACE_PATTERN,
    InvalidNamespace,
    Namespace,
    hidden_character,
    is_hidden,
    normalize_namespace,
)
from spaceduck.core.tokens import InvalidTokenSpec, token_create
from spaceduck.models import ApiToken, NamespaceErasure
from spaceduck.ops.checks import check_namespace_names
from spaceduck.ops.erasure import erase_namespace, stored_counts
from spaceduck.ops.namespace_names import stored_name_problems
from spaceduck.ops.transfer.export import export_to_path
from spaceduck.ops.transfer.formats import TransferError
from spaceduck.ops.transfer.importer import import_file
from tests.conftest import Actor, make_actor

pytestmark = pytest.mark.django_db

# (the character, its code point and name as the refusal says them)
HIDDEN = [
    ("\u00ad", "U+00AD SOFT HYPHEN"),
    ("\u200b", "U+200B ZERO WIDTH SPACE"),
    ("\u200c", "U+200C ZERO WIDTH NON-JOINER"),
    ("\u200d", "U+200D ZERO WIDTH JOINER"),
    ("\u2060", "U+2060 WORD JOINER"),
    ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("\u200e", "U+200E LEFT-TO-RIGHT MARK"),
    ("\u200f", "U+200F RIGHT-TO-LEFT MARK"),
    ("\u061c", "U+061C ARABIC LETTER MARK"),
    ("\u202a", "U+202A LEFT-TO-RIGHT EMBEDDING"),
    ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
    ("\u2069", "U+2069 POP DIRECTIONAL ISOLATE"),
    ("\x07", "U+0007 (a control character)"),
    ("\x7f", "U+007F (a control character)"),
    ("\x85", "U+0085 (a control character)"),
    ("\u00a0", "U+00A0 NO-BREAK SPACE"),
    ("\u3000", "U+3000 IDEOGRAPHIC SPACE"),
    ("\u2028", "U+2028 LINE SEPARATOR"),
    ("\u034f", "U+034F COMBINING GRAPHEME JOINER"),
    ("\u3164", "U+3164 HANGUL FILLER"),
    ("\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
    ("\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A"),
]
DECOMPOSED = "user:jose\u0301"  # "e" and a combining acute accent
COMPOSED = "user:jos\u00e9"


def hiding(ch: str) -> str:
    return f"user:ali{ch}ce"


# --- the rule ------------------------------------------------------------------------


@pytest.mark.parametrize(("ch", "described"), HIDDEN)
def test_each_hidden_character_is_refused_naming_it_and_its_position(
    ch: str, described: str
) -> None:
    with pytest.raises(InvalidNamespace) as refused:
        normalize_namespace(hiding(ch))
    assert f"holds {described} at position 9" in str(refused.value)
    with pytest.raises(InvalidNamespace, match="namespace id"):
        Namespace("user", f"ali{ch}ce")


def test_every_control_and_format_character_is_refused() -> None:
    for code in range(0x110000):
        ch = chr(code)
        if unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"}:
            assert is_hidden(ch), f"U+{code:04X}"
    assert not is_hidden(" ")
    assert not is_hidden("é")
    assert not is_hidden("☕")
    assert hidden_character("user:alice") is None


def test_nfc_equivalent_spellings_are_one_namespace() -> None:
    assert DECOMPOSED != COMPOSED
    assert normalize_namespace(DECOMPOSED) == COMPOSED
    assert Namespace("user", "jose\u0301") == Namespace("user", "jos\u00e9")


def test_the_schema_pattern_refuses_what_the_service_refuses_in_the_bmp() -> None:
    import re

    for ch, _ in HIDDEN:
        if ord(ch) <= 0xFFFF:
            assert not re.match(NAMESPACE_PATTERN, hiding(ch)), repr(ch)
    assert re.match(NAMESPACE_PATTERN, "user:café ☕ alice")


def test_the_schema_class_holds_exactly_the_bmp_characters_the_service_refuses() -> None:
    """The one-pass build of the class (for start-up time) against ``is_hidden`` asked of
    every BMP character but the surrogates."""
    from spaceduck.core.namespaces import _hidden_bmp

    asked = [
        code for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF and is_hidden(chr(code))
    ]
    assert _hidden_bmp() == asked
    assert 0x20 not in asked
    assert 0xA0 in asked
    assert 0x034F in asked


# --- front ends ----------------------------------------------------------------------


@pytest.fixture
def admin_token() -> Actor:
    return make_actor(["*"], ["read", "write", "admin"], name="root")


@pytest.mark.parametrize(("ch", "described"), HIDDEN[:13])
def test_the_api_refuses_a_hidden_character_with_422_and_the_reason(
    admin_token: Actor, ch: str, described: str
) -> None:
    ns = hiding(ch)
    answers = [
        admin_token.post("/api/memories", {"namespace": ns, "kind": "fact", "content": "x"}),
        admin_token.post("/api/threads", {"namespace": ns}),
        admin_token.post("/api/notes", {"namespace": ns, "body": "x"}),
        admin_token.get("/api/memories", {"namespace": ns}),
        admin_token.get("/api/threads", {"namespace": ns}),
        admin_token.get("/api/memories/search", {"namespace": ns, "q": "x"}),
        admin_token.get("/api/notes", {"namespace": ns}),
        admin_token.put(f"/api/facts/{quote(ns)}/k", {"value": 1}),
        admin_token.delete(f"/api/namespaces/{quote(ns)}"),
    ]
    for response in answers:  # InvalidInput, as every malformed namespace (spaceduck.core.errors)
        assert response.status_code == 422, response.content
        assert described in response.json()["detail"]
    assert not Memory.objects.exists()
    assert not Thread.objects.exists()
    assert not Note.objects.exists()


def test_the_api_stores_nfc_spellings_in_one_namespace(admin_token: Actor) -> None:
    for ns in (DECOMPOSED, COMPOSED):
        response = admin_token.post("/api/threads", {"namespace": ns})
        assert response.status_code == 201, response.content
        assert response.json()["namespace"] == COMPOSED
    assert set(Thread.objects.values_list("namespace", flat=True)) == {COMPOSED}
    listed = admin_token.get("/api/threads", {"namespace": DECOMPOSED}).json()["threads"]
    assert len(listed) == 2


def test_a_token_granted_one_spelling_reaches_the_other(db: None) -> None:
    agent = make_actor([DECOMPOSED], ["read", "write"], name="jose")
    assert ApiToken.objects.get().namespaces == [COMPOSED]
    assert agent.post("/api/threads", {"namespace": COMPOSED}).status_code == 201
    assert agent.get("/api/threads", {"namespace": DECOMPOSED}).status_code == 200


def test_a_token_grant_with_a_hidden_character_is_refused() -> None:
    with pytest.raises(InvalidTokenSpec, match="U\\+202E RIGHT-TO-LEFT OVERRIDE"):
        token_create(name="x", namespaces=[hiding("\u202e")], permissions=["read"])


@pytest.mark.parametrize("htmx", [False, True])
def test_the_tokens_page_refuses_a_hidden_grant(staff_client: Client, htmx: bool) -> None:
    headers = {"HX-Request": "true"} if htmx else {}
    response = staff_client.post(
        "/tokens/",
        {"name": "x", "namespaces": hiding("\u00ad"), "permissions": ["read"], "once": "o1"},
        headers=headers,
    )
    assert response.status_code == 400
    assert "U+00AD SOFT HYPHEN" in response.content.decode()
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("htmx", [False, True])
@pytest.mark.parametrize("page", ["/", "/threads/", "/facts/", "/extractions/", "/context/"])
def test_dashboard_filters_refuse_a_hidden_namespace(
    staff_client: Client, page: str, htmx: bool
) -> None:
    headers = {"HX-Request": "true"} if htmx else {}
    response = staff_client.get(page, {"namespace": hiding("\u200b")}, headers=headers)
    assert response.status_code in (200, 400)
    assert "U+200B ZERO WIDTH SPACE" in response.content.decode()


def test_the_admin_refuses_a_hidden_namespace(staff_client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.filter(username="staff").update(is_superuser=True)
    response = staff_client.post(
        "/admin/notes/note/add/", {"namespace": hiding("\u2066"), "body": "x"}
    )
    assert response.status_code == 200  # the form again, with the reason
    assert "U+2066 LEFT-TO-RIGHT ISOLATE" in response.content.decode()
    assert not Note.objects.exists()


def test_the_python_store_refuses_and_normalises() -> None:
    from spaceduck import store

    with pytest.raises(Exception, match="U\\+00AD SOFT HYPHEN"):
        store.save_note(hiding("\u00ad"), "x")
    assert store.save_note(DECOMPOSED, "x").namespace == COMPOSED
    assert set_fact(DECOMPOSED, "k", 1).namespace == COMPOSED


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tools_refuse_a_hidden_namespace() -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from notes.mcp_tools import save_note
    from spaceduck.core.mcp_base import set_stdio_token

    created = token_create(name="mcp", namespaces=["user:*"], permissions=["read", "write"])
    set_stdio_token(created.secret)
    try:
        with pytest.raises(ToolError, match="U\\+202E RIGHT-TO-LEFT OVERRIDE"):
            save_note(body="x", namespace=hiding("\u202e"))
        saved = save_note(body="x", namespace=DECOMPOSED)
        assert saved["namespace"] == COMPOSED
    finally:
        set_stdio_token(None)


# --- names stored before: the check, erase and export --------------------------------


def _insert_raw(table: str, columns: dict[str, object]) -> None:
    names = ", ".join(columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(columns.values()))


def test_the_check_lists_stored_names_that_would_now_be_refused_or_respelled() -> None:
    thread = create_thread("user:alice")
    Thread.objects.filter(pk=thread.pk).update(namespace=hiding("\u00ad"))
    fact = set_fact("user:bob", "k", 1)
    Fact.objects.filter(pk=fact.pk).update(namespace=DECOMPOSED)
    token = token_create(name="old", namespaces=["user:carol"], permissions=["read"]).token
    ApiToken.objects.filter(pk=token.pk).update(namespaces=[hiding("\u202e"), "user:*"])
    NamespaceErasure.objects.create(namespace=hiding("\u200b"), erased_by="staff:x")

    found = {(f.table, f.name) for f in stored_name_problems()}
    assert found == {
        ("memories_thread", hiding("\u00ad")),
        ("memories_fact", DECOMPOSED),
        ("spaceduck_apitoken", hiding("\u202e")),
        ("spaceduck_namespaceerasure", hiding("\u200b")),
    }
    warnings = check_namespace_names()
    text = "\n".join(f"{w.id} {w.msg} {w.hint}" for w in warnings)
    assert "1 row(s) of memories_thread" in text
    assert "U+00AD SOFT HYPHEN" in text
    assert f"is not NFC-normalised: requests name it {COMPOSED!r}" in text
    assert f"granted to token #{token.pk} old" in text
    assert "manage.py erase" in text
    assert {w.id for w in warnings} == {"spaceduck.W006", "spaceduck.W007"}
    assert sum(w.id == "spaceduck.W007" for w in warnings) == 1  # the erasure record


def test_a_clean_database_has_no_name_warnings() -> None:
    create_thread("user:alice")
    set_fact(COMPOSED, "k", 1)
    assert check_namespace_names() == []


def test_erase_and_export_take_a_stored_legacy_name_as_it_is(tmp_path: Path) -> None:
    bad = hiding("\u00ad")
    thread = create_thread("user:alice")
    Thread.objects.filter(pk=thread.pk).update(namespace=bad)
    path = tmp_path / "bad.jsonl"
    export_to_path(path, namespace=bad)
    assert thread.pk in path.read_text()
    # An import refuses the name, saying which line and why.
    Thread.objects.all().delete()
    with pytest.raises(TransferError, match="U\\+00AD SOFT HYPHEN"):
        import_file(path)
    # Back in, by hand: erase takes the name exactly as stored.
    Thread.objects.create(id="t-legacy", namespace=bad)
    assert stored_counts(bad)["threads"] == 1
    erase_namespace(bad, by="test")
    assert not Thread.objects.exists()
    # A name nobody stored is still refused.
    with pytest.raises(Exception, match="U\\+200B"):
        stored_counts(hiding("\u200b"))


def test_manage_check_shows_the_warning(capsys: pytest.CaptureFixture[str]) -> None:
    thread = create_thread("user:alice")
    Thread.objects.filter(pk=thread.pk).update(namespace=hiding("\u200d"))
    call_command("check")
    captured = capsys.readouterr()
    assert "spaceduck.W006" in captured.err + captured.out


# --- a note's author -----------------------------------------------------------------


@pytest.fixture
def writer() -> Actor:
    return make_actor(["user:alice"], ["read", "write", "approve"], name="planner")


def post_note(actor: Actor, author: str | None):  # type: ignore[no-untyped-def]
    body: dict[str, object] = {"namespace": "user:alice", "body": "x"}
    if author is not None:
        body["author"] = author
    return actor.post("/api/notes", body)


@pytest.mark.parametrize(
    "author", ["staff:admin", "staff:planner", "token:other", "agent:planner", "planner", "token:"]
)
def test_a_token_cannot_post_a_note_as_someone_else(writer: Actor, author: str) -> None:
    make_actor(["user:bob"], ["read"], name="other")
    response = post_note(writer, author)
    assert response.status_code == 403, response.content
    assert "is not this token" in response.json()["detail"]
    assert "'token:planner'" in response.json()["detail"]
    assert not Note.objects.exists()


def test_a_token_cannot_post_as_a_token_whose_name_extends_its_own(writer: Actor) -> None:
    make_actor(["user:bob"], ["read"], name="planner/deploy")
    assert post_note(writer, "token:planner/deploy").status_code == 403


@pytest.mark.parametrize("author", [None, "token:planner", "token:planner/sub-agent"])
def test_a_token_writes_as_itself_or_a_name_under_it(writer: Actor, author: str | None) -> None:
    response = post_note(writer, author)
    assert response.status_code == 201, response.content
    assert response.json()["author"] == (author or "token:planner")


@pytest.mark.parametrize("author", ["token:planner/", "token:planner/ "])
def test_an_empty_name_under_the_token_is_refused(writer: Actor, author: str) -> None:
    assert post_note(writer, author).status_code == 403


def test_a_person_in_the_admin_writes_as_staff(staff_client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.filter(username="staff").update(is_superuser=True)
    response = staff_client.post(
        "/admin/notes/note/add/", {"namespace": "user:alice", "body": "from a person"}
    )
    assert response.status_code == 302, response.content
    assert Note.objects.get().author == "staff:staff"


@pytest.mark.django_db(transaction=True)
def test_an_mcp_note_is_written_by_the_token() -> None:
    from notes.mcp_tools import save_note
    from spaceduck.core.mcp_base import set_stdio_token

    created = token_create(name="mcp-agent", namespaces=["user:alice"], permissions=["write"])
    set_stdio_token(created.secret)
    try:
        assert save_note(body="x")["author"] == "token:mcp-agent"
    finally:
        set_stdio_token(None)
