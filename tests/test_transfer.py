"""`manage.py export` / `manage.py import`: a round trip gives the same API answers."""

from __future__ import annotations

import gzip
import json
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from memories.models import Extraction, Fact, Memory, MemoryEvent, Message, Thread
from memories.store import keyword_index, vector_index
from memories.tasks import extract_message
from memories.upkeep import integrity
from memories.write import edits, lifecycle, services
from notes import services as note_services
from notes.models import Note, NoteSearchKind, NoteSupersession
from notes.selectors import search_notes
from spaceduck.core.providers import get_embedder
from spaceduck.models import ApiToken
from spaceduck.ops.transfer import formats as transfer
from tests.conftest import Actor, make_actor
from tests.notes import search_index as notes_index
from tests.processes import manage, service_env

pytestmark = pytest.mark.django_db


def lone() -> str:
    """Text a JSON column holds that strict UTF-8 cannot: a lone surrogate, which the API
    took inside JSON values before it refused them and SQLite keeps as an escape.
    PostgreSQL's jsonb never held one, so there a letter outside the BMP (a surrogate pair
    in the file's escapes) stands in."""
    return "\ud800" if connection.vendor == "sqlite" else "\U00010400"


ALL_STATUSES = "candidate,active,superseded,stale,archived"


# --- A database with a bit of everything --------------------------------------------


def post_ok(actor: Actor, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = actor.post(path, body)
    assert response.status_code in (200, 201), response.content
    return response.json()


def build(actor: Actor) -> dict[str, Any]:
    """Memories, history, facts, threads, messages, extractions, notes: through the services."""
    made: dict[str, Any] = {}
    # An identity slot superseded twice: Paris -> Berlin -> Rome.
    chain = []
    for city in ("Paris", "Berlin", "Rome"):
        decision = post_ok(
            actor,
            "/api/memories",
            {
                "namespace": "user:alice",
                "kind": "fact",
                "content": f"Alice lives in {city}.",
                "slot": "location",
                "tags": ["home", "city"],
            },
        )
        chain.append(decision["memory_id"])
    made["chain"] = chain
    tea = services.memory_create(
        namespace="user:alice",
        kind="fact",
        content="Alice drinks green tea every morning.",
        title="Tea",
        tags=["drinks", "morning"],
        context="we talked about breakfast",
        actor="t",
    )
    services.memory_create(
        namespace="user:alice",
        kind="procedure",
        procedure_subtype="constraint",
        content="Never book Alice on flights before 9am.",
        actor="t",
        status="candidate",
        confidence=0.5,
    )
    edited = services.memory_create(
        namespace="user:alice", kind="episode", content="Alice ran a marathon.", actor="t"
    )
    edits.memory_edit(
        memory=edited, changes={"content": "Alice ran the Berlin marathon."}, actor="t"
    )
    archived = services.memory_create(
        namespace="user:alice", kind="fact", content="Alice owns a red bicycle.", actor="t"
    )
    lifecycle.memory_archive(memory=archived, actor="t")
    gone = services.memory_create(
        namespace="user:alice", kind="fact", content="Alice once lived in Oslo.", actor="t"
    )
    services.memory_delete(memory=gone, actor="t")  # a tombstone in the history
    made["memories"] = [*chain, tea.pk, edited.pk, archived.pk]

    # A thread whose messages carry lone surrogates; extraction runs (immediate mode).
    thread = post_ok(actor, "/api/threads", {"namespace": "user:alice", "title": "Trip"})
    made["thread"] = thread["id"]
    saved = [
        post_ok(actor, f"/api/threads/{thread['id']}/messages", body)
        for body in (
            {"role": "user", "content": "I work at CERN and I play the cello."},
            {"role": "assistant", "content": {"structured": [1, 2.5, None, "x"]}},
            {"role": "user", "content": "Remember that my cat is called Miso."},
        )
    ]
    # The request queues extraction on commit; a test's transaction never commits.
    for extraction in Extraction.objects.filter(status="queued").order_by("pk"):
        extract_message.call_local(extraction.pk)
    made["extractions"] = [m["extraction"]["id"] for m in saved if m["extraction"]]
    assert Memory.objects.filter(source_message__isnull=False).exists()

    # Facts: JSON null values (with and without a TTL), provenance.
    services.set_fact("user:alice", "nothing", None)
    services.set_fact("user:alice", "ttl/null", None, ttl_ms=86_400_000)
    services.set_fact("user:alice", "theme", {"dark": True}, ttl_ms=3_600_000)
    services.set_fact("user:alice", "lone", "x", provenance={"source": "x"})
    made["facts"] = ["nothing", "ttl/null", "theme", "lone"]

    # Lone surrogates in JSON columns: the API refuses them now, but it took them before
    # (in message content, fact values, tags, provenance), so databases hold them.
    first, second, _ = (m["id"] for m in saved)
    odd = lone()
    Message.objects.filter(pk=first).update(
        content=f"I work at CERN and I play the cello {odd}.",
        provenance={"run_id": f"r{odd}", "note": odd},
    )
    Message.objects.filter(pk=second).update(content={"structured": [1, 2.5, None, odd]})
    Memory.objects.filter(pk=chain[-1]).update(tags=["home", f"city{odd}"])
    Memory.objects.filter(pk=tea.pk).update(tags=[f"drinks{odd}", "morning"])
    Fact.objects.filter(key="theme").update(value={"dark": True, "name": f"x{odd}"})
    Fact.objects.filter(key="lone").update(value=odd, provenance={"source": odd})

    # Notes: search enabled for the kind, statuses, supersession edges.
    note_services.enable_note_search("user")
    note_services.save_note("user:alice", "The VPN needs a restart after upgrades.", id="vpn-1")
    note_services.save_note(
        "user:alice",
        "The VPN restarts itself after upgrades now.",
        id="vpn-2",
        supersedes=["vpn-1"],
    )
    note_services.save_note(
        "user:alice", "Pending advice about the VPN.", id="vpn-3", status="pending"
    )
    note_services.save_note("user:alice", "Rejected VPN idea.", id="vpn-4", status="rejected")
    note_services.set_note_status("vpn-3", "accepted", by="staff:bob")
    note_services.save_note("agent:ops", "Agent notes are not searchable.", id="agent-1")

    # Another namespace, for --namespace.
    services.memory_create(
        namespace="user:bob", kind="fact", content="Bob keeps bees on his roof.", actor="t"
    )
    services.set_fact("user:bob", "hives", 3)
    services.create_thread("user:bob", "Bob's thread")
    note_services.save_note("user:bob", "Bob's bees swarm in May.", id="bob-1")
    return made


def answers(actor: Actor, made: dict[str, Any], namespace: str = "user:alice") -> dict[str, Any]:
    """The JSON API's answers about everything in ``made``."""

    def get(path: str, **params: Any) -> Any:
        response = actor.get(path, params)
        assert response.status_code == 200, (path, response.content)
        return response.json()

    out: dict[str, Any] = {
        "list": get("/api/memories", namespace=namespace, status=ALL_STATUSES, limit=200),
        "list_active": get("/api/memories", namespace=namespace),
        "facts": get("/api/facts", namespace=namespace),
        "threads": get("/api/threads", namespace=namespace),
        "notes": get("/api/notes", namespace=namespace),
        "notes_all": get(
            "/api/notes",
            namespace=namespace,
            status="accepted,pending,rejected",
            include_superseded="true",
        ),
    }
    for query in ("Where does Alice live?", "tea morning", "cello CERN", "marathon Berlin"):
        out[f"search {query}"] = get("/api/memories/search", q=query, namespace=namespace)
    out["search superseded"] = get(
        "/api/memories/search", q="Alice lives in", namespace=namespace, status="superseded,active"
    )
    for query in ("VPN", "upgrades restart", "bees"):
        out[f"notes {query}"] = get("/api/notes/search", kind="user", q=query, namespace=namespace)
    for memory in out["list"]["memories"]:
        out[f"history {memory['id']}"] = get(f"/api/memories/{memory['id']}/history")
    for thread in out["threads"]["threads"]:
        out[f"messages {thread['id']}"] = get(f"/api/threads/{thread['id']}/messages")
    for fact in out["facts"]["facts"]:
        out[f"fact {fact['key']}"] = get(f"/api/facts/{namespace}/{fact['key']}")
    for extraction in made.get("extractions", []):
        out[f"extraction {extraction}"] = get(f"/api/extractions/{extraction}")
    return out


def ids(search: dict[str, Any]) -> set[int]:
    return {hit["memory"]["id"] for hit in search["memories"]}


# --- A fresh database -------------------------------------------------------------------

KEEP = {"django_migrations", "django_content_type", "auth_permission", "spaceduck_vectorindexstate"}


def wipe() -> None:
    """Empty every table a fresh `migrate` leaves empty, virtual tables and counters included."""
    tables = [m._meta.db_table for m in apps.get_models() if m._meta.db_table not in KEEP]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred checks left
            cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
            cursor.execute("TRUNCATE memories_vector_version, memories_fts_stats, notes_fts")
            for table in ("memories_fts", "memories_fts_pending", "memories_vec"):
                assert cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
        else:
            for table in tables:
                cursor.execute(f'DELETE FROM "{table}"')
            cursor.execute("DELETE FROM memories_vec")
            cursor.execute("DELETE FROM memories_vector_version")
            cursor.execute("DELETE FROM memories_vector_change")
            cursor.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
            cursor.execute("INSERT INTO notes_fts(notes_fts) VALUES ('delete-all')")
            cursor.execute("DELETE FROM sqlite_sequence WHERE name NOT LIKE 'memories_vec%'")
            for table in ("memories_fts_docsize", "notes_fts_docsize", "memories_vec_rowids"):
                assert cursor.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    vector_index.cache_clear()
    keyword_index.forget_common()
    for model in (Memory, MemoryEvent, Fact, Thread, Message, Extraction, Note, ApiToken):
        assert not model.objects.exists()


def export_file(tmp_path: Path, *args: str, name: str = "export.jsonl") -> Path:
    """Tokens included: the test's token must still work after a wipe and an import."""
    path = tmp_path / name
    call_command("export", str(path), "--no-progress", "--tokens", *args, stdout=StringIO())
    return path


def import_path(path: Path, *args: str) -> str:
    out = StringIO()
    call_command("import", str(path), "--no-progress", *args, stdout=out)
    return out.getvalue()


def records(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return [json.loads(line) for line in handle]


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stop the clock (recall's recency, fact expiry): answers compared later stay equal."""
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)


@pytest.fixture
def admin() -> Actor:
    return make_actor(["*"], ["read", "write", "approve", "admin"], name="admin")


# --- The round trip -------------------------------------------------------------------


def test_round_trip_into_a_fresh_database_gives_identical_answers(
    admin: Actor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = build(admin)
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    before = answers(admin, made)
    before_bob = answers(admin, {}, namespace="user:bob")
    path = export_file(tmp_path)
    counts = {
        "memories": Memory.objects.count(),
        "events": MemoryEvent.objects.count(),
        "facts": Fact.objects.count(),
        "notes": Note.objects.count(),
        "edges": NoteSupersession.objects.count(),
        "extractions": Extraction.objects.count(),
    }

    wipe()
    out = import_path(path)
    assert "Note search enabled for: user." in out
    assert "from the file, 0 embedded" in out

    after = answers(admin, made)  # the same token: it came back with --tokens
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key], key
    assert answers(admin, {}, namespace="user:bob") == before_bob
    assert counts == {
        "memories": Memory.objects.count(),
        "events": MemoryEvent.objects.count(),
        "facts": Fact.objects.count(),
        "notes": Note.objects.count(),
        "edges": NoteSupersession.objects.count(),
        "extractions": Extraction.objects.count(),
    }
    assert integrity.index_report()["problem"] is None


def test_what_the_round_trip_covers(admin: Actor, tmp_path: Path, frozen: None) -> None:
    """The answers above include each tricky value; check they are really there."""
    made = build(admin)
    path = export_file(tmp_path)
    wipe()
    import_path(path)
    got = answers(admin, made)
    odd = lone()
    memories = {m["id"]: m for m in got["list"]["memories"]}
    paris, berlin, rome = made["chain"]
    assert memories[paris]["status"] == memories[berlin]["status"] == "superseded"
    assert (memories[paris]["superseded_by_id"], memories[berlin]["superseded_by_id"]) == (
        berlin,
        rome,
    )
    assert memories[rome]["tags"] == ["home", f"city{odd}"]
    assert {m["status"] for m in memories.values()} >= {"candidate", "archived", "superseded"}
    history = [e["event"] for e in got[f"history {paris}"]["events"]]
    assert history == ["created", "superseded"]
    assert MemoryEvent.objects.filter(event="deleted").count() == 1  # the tombstone
    facts = {f["key"]: f for f in got["facts"]["facts"]}
    assert facts["nothing"]["value"] is None
    assert facts["ttl/null"]["value"] is None
    assert facts["ttl/null"]["ttl_ms"] == 86_400_000
    assert facts["ttl/null"]["expires_at"] is not None
    assert facts["lone"]["value"] == odd
    assert facts["lone"]["provenance"] == {"source": odd}
    messages = got[f"messages {made['thread']}"]["messages"]
    assert messages[0]["content"].endswith(f"cello {odd}.")
    assert messages[0]["provenance"] == {"run_id": f"r{odd}", "note": odd}
    assert messages[1]["content"] == {"structured": [1, 2.5, None, odd]}
    assert sorted(n["id"] for n in got["notes VPN"]["notes"]) == ["vpn-2", "vpn-3"]
    notes = {n["id"]: n for n in got["notes_all"]["notes"]}
    assert notes["vpn-2"]["supersedes"] == ["vpn-1"]
    assert (notes["vpn-3"]["status"], notes["vpn-3"]["status_by"]) == ("accepted", "staff:bob")
    assert notes["vpn-4"]["status"] == "rejected"
    assert got[f"extraction {made['extractions'][0]}"]["candidates"]
    found = [hit["memory"]["id"] for hit in got["search Where does Alice live?"]["memories"]]
    assert rome in found
    assert paris not in found


def test_the_file_is_ascii_json_lines_in_dependency_order(admin: Actor, tmp_path: Path) -> None:
    build(admin)
    path = export_file(tmp_path)
    raw = path.read_bytes()
    assert raw.isascii()
    assert json.dumps(lone())[1:-1].encode() in raw  # lone surrogates as escapes
    lines = records(path)
    header, end = lines[0], lines[-1]
    assert header["format"] == "spaceduck-export"
    assert header["version"] == 1
    fingerprint = get_embedder().fingerprint
    assert header["embedding"] == {
        "provider": fingerprint.provider,
        "model": fingerprint.model,
        "dimensions": fingerprint.dimensions,
    }
    assert header["vectors"] is True
    assert header["tokens"] is True
    assert end == {"type": "end", "counts": header["counts"]}
    types = [line["type"] for line in lines[1:-1]]
    order = [t.name for t in transfer.TYPES]
    assert types == sorted(types, key=order.index)
    tokens = [line for line in lines if line["type"] == "token"]
    assert [t["name"] for t in tokens] == ["admin"]
    assert set(tokens[0]) >= {"key_hash", "prefix"}
    assert "secret" not in tokens[0]
    assert header["counts"]["memory"] == types.count("memory") == Memory.objects.count()
    assert all("embedding" in line for line in lines if line["type"] == "memory")
    null_fact = next(x for x in lines if x["type"] == "fact" and x["key"] == "nothing")
    assert null_fact["value"] is None


def test_importing_twice_adds_nothing(admin: Actor, tmp_path: Path, frozen: None) -> None:
    made = build(admin)
    before = answers(admin, made)
    path = export_file(tmp_path)
    # Into the database it came from: everything is already there, unchanged.
    out = import_path(path)
    assert "Created: nothing." in out
    wipe()
    import_path(path)
    rows = {m: m.objects.count() for m in (Memory, MemoryEvent, Fact, Note, Message, Extraction)}
    out = import_path(path)
    assert "Created: nothing." in out
    assert "Already there, unchanged:" in out
    assert {m: m.objects.count() for m in rows} == rows
    assert answers(admin, made) == before
    assert integrity.index_report()["problem"] is None


def test_export_of_one_namespace(admin: Actor, tmp_path: Path, frozen: None) -> None:
    build(admin)
    bob = make_actor(["user:bob"], ["read"], name="bob")
    bob_before = answers(bob, {}, namespace="user:bob")
    path = export_file(tmp_path, "--namespace", "user:bob")
    lines = records(path)
    assert lines[0]["namespace"] == "user:bob"
    namespaced = [x for x in lines[1:-1] if "namespace" in x]
    assert namespaced
    assert {x["namespace"] for x in namespaced} == {"user:bob"}
    assert [x["kind"] for x in lines if x["type"] == "search_kind"] == ["user"]
    # Only tokens granted exactly that namespace travel with it (not the admin's "*").
    assert [x["name"] for x in lines if x["type"] == "token"] == ["bob"]

    wipe()
    import_path(path)
    assert not Memory.objects.filter(namespace="user:alice").exists()
    assert not Note.objects.exclude(namespace="user:bob").exists()
    bob_after = answers(bob, {}, namespace="user:bob")
    # BM25 weighs by the whole index's size, so scores differ; what is found does not.
    assert bob_after["list"] == bob_before["list"]
    assert bob_after["facts"] == bob_before["facts"]
    assert bob_after["threads"] == bob_before["threads"]
    assert [n["id"] for n in bob_after["notes bees"]["notes"]] == ["bob-1"]


def test_conflicts_stop_the_import_before_anything_is_written(admin: Actor, tmp_path: Path) -> None:
    made = build(admin)
    path = export_file(tmp_path)
    tea = Memory.objects.get(pk=made["memories"][3])
    edits.memory_edit(memory=tea, changes={"content": "Alice switched to coffee."}, actor="t")
    services.delete_fact("user:alice", "theme")
    with pytest.raises(CommandError, match=r"conflict.*nothing was imported") as failure:
        import_path(path)
    assert f"memory {tea.pk}" in str(failure.value)
    assert "content" in str(failure.value)
    assert "--on-conflict skip" in str(failure.value)
    assert not Fact.objects.filter(key="theme").exists()  # nothing written

    out = import_path(path, "--on-conflict", "skip")
    assert "Skipped" in out
    assert Fact.objects.filter(key="theme").exists()  # the missing row came back
    assert Memory.objects.get(pk=tea.pk).content == "Alice switched to coffee."  # kept
    # The conflicting memory's history in the file was not attached to the database's one.
    assert MemoryEvent.objects.filter(memory_id=tea.pk, event="edited").count() == 1


def test_without_vectors_or_with_another_embedder_import_embeds(
    admin: Actor, tmp_path: Path, frozen: None
) -> None:
    made = build(admin)
    before = answers(admin, made)
    path = export_file(tmp_path, "--no-vectors")
    assert not any("embedding" in x for x in records(path) if x["type"] == "memory")
    wipe()
    out = import_path(path)
    assert f"0 from the file, {Memory.objects.count()} embedded" in out
    # The hash embedder is deterministic: the same vectors, the same answers, except
    # the order of exact ties (cosine 0.0 between texts without a common word), which
    # follows where vec0 stored each vector.
    after = answers(admin, made)
    for key in before:
        if key.startswith("search"):
            assert ids(after[key]) == ids(before[key]), key
        else:
            assert after[key] == before[key], key

    # Vectors from another embedder are not used.
    lines = records(path)
    lines[0]["embedding"] = {"provider": "other", "model": "m", "dimensions": 384}
    lines[0]["vectors"] = True
    with_vectors = records(export_file(tmp_path, name="with-vectors.jsonl"))
    vectors = {x["id"]: x["embedding"] for x in with_vectors if x["type"] == "memory"}
    for line in lines:
        if line["type"] == "memory":
            line["embedding"] = vectors[line["id"]]
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(x) + "\n" for x in lines))
    wipe()
    out = import_path(other)
    assert "0 from the file" in out
    assert "the file's vectors are" in out


def test_new_rows_after_an_import_get_ids_of_their_own(admin: Actor, tmp_path: Path) -> None:
    made = build(admin)
    path = export_file(tmp_path)
    wipe()  # ids restart, as in a fresh database
    import_path(path)
    imported = set(Memory.objects.values_list("pk", flat=True))
    body = {"namespace": "user:alice", "kind": "fact", "content": "Bob's new kite is red."}
    memory_id = post_ok(admin, "/api/memories", body)["memory_id"]
    assert memory_id > max(imported)
    thread = post_ok(admin, "/api/threads", {"namespace": "user:alice"})
    post_ok(admin, f"/api/threads/{thread['id']}/messages", {"role": "user", "content": "Hi."})
    assert MemoryEvent.objects.filter(memory_id=memory_id).count() == 1
    assert made["chain"][0] in imported


def test_gzip_and_damaged_files(admin: Actor, tmp_path: Path) -> None:
    build(admin)
    gz = export_file(tmp_path, name="export.jsonl.gz")
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    plain = export_file(tmp_path)
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text("".join(plain.read_text().splitlines(keepends=True)[:-3]))
    with pytest.raises(CommandError, match="no end line"):
        import_path(truncated)
    with pytest.raises(CommandError, match="exists; pass --force"):
        export_file(tmp_path)
    wipe()
    import_path(gz)
    assert Memory.objects.count() == sum(1 for x in records(plain) if x["type"] == "memory")
    assert integrity.index_report()["problem"] is None


def test_a_dangling_optional_reference_is_cleared_a_required_one_refused(tmp_path: Path) -> None:
    now = timezone.now().isoformat()
    base = {
        "namespace": "user:alice",
        "kind": "fact",
        "title": "",
        "content": "Alice likes kites.",
        "summary": "",
        "tags": [],
        "context": "",
        "importance": 0.5,
        "confidence": 0.8,
        "status": "active",
        "scope": "global",
        "scope_id": "",
        "procedure_subtype": "",
        "slot": "",
        "source_type": "api",
        "source_task_id": "",
        "source_skill_id": "",
        "content_hash": services.content_hash("Alice likes kites."),
        "occurred_at": None,
        "expires_at": None,
        "created_at": now,
        "updated_at": now,
        "last_seen_at": now,
    }
    memory = {
        "type": "memory",
        "id": 7,
        **base,
        "superseded_by_id": 99,
        "source_message_id": "gone",
        "source_thread_id": None,
    }
    header = {"type": "header", "format": "spaceduck-export", "version": 1, "vectors": False}
    path = tmp_path / "hand.jsonl"
    path.write_text(
        "\n".join(json.dumps(x) for x in (header, memory, {"type": "end", "counts": {"memory": 1}}))
    )
    out = import_path(path)
    assert "1 memory.source_message_id cleared" in out
    assert "1 memory.superseded_by_id cleared" in out
    stored = Memory.objects.get(pk=7)
    assert stored.superseded_by_id is None
    assert stored.source_message_id is None
    assert keyword_index.matching_ids("user:alice", "kites") == [7]
    assert integrity.index_report()["problem"] is None

    message = {
        "type": "message",
        "id": "m1",
        "thread_id": "nope",
        "role": "user",
        "content": "hi",
        "provenance": None,
        "created_at": now,
        "updated_at": now,
    }
    path.write_text(
        "\n".join(
            json.dumps(x) for x in (header, message, {"type": "end", "counts": {"message": 1}})
        )
    )
    with pytest.raises(CommandError, match="thread_id 'nope' is neither in the file"):
        import_path(path)


def test_a_search_kind_enabled_by_import_backfills_existing_notes(tmp_path: Path) -> None:
    note_services.save_note("user:alice", "Existing note about lighthouses.", id="old")
    note_services.save_note("user:bob", "Imported note about lighthouses.", id="new")
    note_services.enable_note_search("user")
    path = export_file(tmp_path, "--namespace", "user:bob")
    Note.objects.filter(uid="new").delete()
    NoteSearchKind.objects.all().delete()
    notes_index.empty()
    import_path(path)
    assert {n.uid for n in search_notes("user", "lighthouses")} == {"old", "new"}


# --- 10k memories ----------------------------------------------------------------------


def bulk_memories(count: int, namespaces: int = 4) -> None:
    texts = [
        f"Memory {i}: {WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]}"
        for i in range(count)
    ]
    vectors = get_embedder().embed(texts)
    rows = Memory.objects.bulk_create(
        (
            Memory(
                namespace=f"user:n{i % namespaces}",
                kind="fact",
                content=text,
                content_hash=services.content_hash(text),
                status="superseded" if i % 10 == 0 else "active",
                tags=[f"t{i % 13}"],
            )
            for i, text in enumerate(texts)
        ),
        batch_size=2000,
    )
    ids = list(Memory.objects.order_by("pk").values_list("pk", flat=True))
    by_id = dict(zip(ids, rows, strict=True))
    for start in range(0, count, 2000):
        vector_index.upsert(
            (pk, by_id[pk].namespace, vectors[i])
            for i, pk in enumerate(ids[start : start + 2000], start=start)
        )
    # Supersession edges pointing forward (to a later id) across the import's batches.
    Memory.objects.filter(status="superseded").update(superseded_by_id=ids[-1])
    events = [
        MemoryEvent(memory_id=pk, namespace=by_id[pk].namespace, event="created", actor="bulk")
        for pk in ids
    ]
    MemoryEvent.objects.bulk_create(events, batch_size=2000)


WORDS = [
    "kayak", "violin", "tomato", "glacier", "lantern", "orchid", "compass", "falcon",
    "harbor", "meadow", "quartz", "saffron", "tundra", "walnut", "zephyr", "basalt",
]  # fmt: skip


@pytest.mark.slow  # ~20 s: 10k memories built, exported, imported, searched
def test_ten_thousand_memories_round_trip(tmp_path: Path, frozen: None) -> None:
    bulk_memories(10_000)
    actor = make_actor(["*"], ["read"], name="reader")
    queries = ["kayak violin", "glacier", "Memory 4242", "zephyr basalt"]

    def snapshot() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for ns in ("user:n0", "user:n3"):
            for q in queries:
                response = actor.get("/api/memories/search", {"q": q, "namespace": ns})
                out[f"{ns} {q}"] = response.json()
            out[f"{ns} list"] = actor.get(
                "/api/memories", {"namespace": ns, "status": ALL_STATUSES, "limit": 200}
            ).json()
        return out

    before = snapshot()
    started = time.monotonic()
    path = export_file(tmp_path)
    exported = time.monotonic() - started
    wipe()
    started = time.monotonic()
    import_path(path)
    imported = time.monotonic() - started
    assert snapshot() == before
    report = integrity.index_report()
    assert report == {**report, "memories": 10_000, "vectors": 10_000, "keyword": 10_000}
    assert report["problem"] is None
    assert Memory.objects.filter(superseded_by__isnull=False).count() == 1000
    assert MemoryEvent.objects.count() == 10_000
    print(f"\n10k memories: export {exported:.1f} s, import {imported:.1f} s")


# --- A really fresh database file, through manage.py -----------------------------------


@pytest.mark.slow
def test_manage_py_import_into_a_new_database_file_then_export_gives_the_same_file(
    admin: Actor, tmp_path: Path
) -> None:
    build(admin)
    first = export_file(tmp_path, name="first.jsonl")
    env = service_env(tmp_path / "fresh")
    (tmp_path / "fresh").mkdir()
    for args in (
        ("migrate", "--no-input", "-v", "0"),
        ("import", str(first), "--no-progress"),
        ("export", str(tmp_path / "second.jsonl"), "--tokens", "--no-progress"),
        ("reindex", "--check"),
    ):
        done = manage(env, *args)
        assert done.returncode == 0, done.stderr + done.stdout
    one, two = records(first), records(tmp_path / "second.jsonl")
    one[0].pop("exported_at"), two[0].pop("exported_at")
    assert one == two


def test_every_model_with_data_is_exported() -> None:
    """A new model must be added to transfer.TYPES (or listed here as not worth exporting)."""
    operational = {
        "admin.LogEntry",
        "auth.Permission",
        "auth.Group",
        "auth.User",
        "contenttypes.ContentType",
        "sessions.Session",
        "memories.MaintenanceRun",
        "spaceduck.VectorIndexState",
        "spaceduck.WorkerHeartbeat",
        # Settings > Memory and its re-embedding jobs belong to the deployment that runs them:
        # an import keeps the target's own settings (and its embedder, which its index matches).
        "spaceduck.RuntimeSetting",
        "spaceduck.SettingChange",
        "memories.ReembedJob",
        # Deliveries to this deployment's webhook URL: its own log, not the memory's.
        "spaceduck.WebhookDelivery",
    }
    exported = {t.model._meta.label for t in transfer.TYPES}
    ours = {
        m._meta.label
        for m in apps.get_models()
        if m._meta.app_label in ("memories", "notes", "spaceduck")
    }
    assert ours - operational == exported


def test_an_import_invalidates_every_process_vector_cache(tmp_path: Path) -> None:
    kept = services.memory_create(
        namespace="user:alice", kind="fact", content="Alice collects stamps.", actor="t"
    )
    services.memory_create(
        namespace="user:alice", kind="fact", content="Alice restores old clocks.", actor="t"
    )
    path = export_file(tmp_path)
    Memory.objects.exclude(pk=kept.pk).delete()
    query = get_embedder().embed(["old clocks"])[0]
    assert [i for i, _ in vector_index.search("user:alice", query, 5)] == [kept.pk]  # cached

    def epoch() -> int:
        with connection.cursor() as cursor:
            row = cursor.execute(
                "SELECT version FROM memories_vector_version WHERE namespace = ''"
            ).fetchone()
        return 0 if row is None else int(row[0])

    before = epoch()
    import_path(path)
    assert epoch() == before + 1  # other processes reload their copies on their next search
    hits = vector_index.search("user:alice", query, 5)
    assert hits[0][0] != kept.pk
    assert Memory.objects.get(pk=hits[0][0]).content == "Alice restores old clocks."
