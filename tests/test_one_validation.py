"""One validation for every front end (issue 29 item 1).

The same over-long inputs go through the JSON API (a token), the dashboard (staff, with
and without htmx) and the admin; each refuses them the same way: nothing is stored or
changed, a 4xx or the admin form's error beside the field, and the message names the
same limit. The forms carry ``maxlength`` (and tags a hint) from the same limits
(spaceduck.core.limits), and the services refuse them too, so no front end can skip them.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from memories.extraction.types import candidate_from_api
from memories.models import Fact, Memory, MemoryEvent
from memories.write import edits
from memories.write.ingest import memory_write
from memories.write.services import memory_create
from notes.models import Note
from spaceduck.core.errors import InvalidInput
from tests.conftest import Actor
from tests.memories.test_admin import add_form, change_form
from tests.memories.test_memory_page import edit_data
from tests.notes.test_admin import add_form as note_add_form

pytestmark = pytest.mark.django_db

NS = "user:alice"
HTMX = {"HX-Request": "true"}
ORIGINAL = "Alice plays the oboe."

# (the changes, words every front end's refusal holds: the limit it is over)
MEMORY_CASES = [
    pytest.param({"content": "a" * 5000}, "at most 1,000 characters", id="content-5000"),
    pytest.param({"title": "t" * 201}, "at most 200 characters", id="title-201"),
    pytest.param({"tags": [f"tag{i}" for i in range(40)]}, "at most 20 items", id="40-tags"),
    pytest.param({"tags": ["x" * 101]}, "at most 100 characters", id="tag-101"),
    pytest.param({"summary": "s" * 1001}, "at most 1,000 characters", id="summary-1001"),
    pytest.param({"scope_id": "p" * 256, "scope": "project"}, "at most 255", id="scope-id-256"),
]


@pytest.fixture
def memory() -> Memory:
    return memory_create(namespace=NS, kind="fact", content=ORIGINAL, actor="t")


def as_form(changes: dict[str, Any]) -> dict[str, Any]:
    """The changes as a form posts them (tags as one comma-separated line)."""
    return {
        name: ", ".join(value) if isinstance(value, list) else value
        for name, value in changes.items()
    }


def unchanged(memory: Memory) -> None:
    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.content, stored.title, stored.tags, stored.summary, stored.scope_id) == (
        memory.content,
        memory.title,
        memory.tags,
        memory.summary,
        memory.scope_id,
    )
    assert not MemoryEvent.objects.filter(memory_id=memory.pk, event="edited").exists()


def admin_errors(response: Any, field: str) -> str:
    """The admin form's errors beside ``field`` (the page is shown again, 200)."""
    assert response.status_code == 200, response.status_code
    form = response.context["adminform"].form
    assert field in form.errors, form.errors
    return " ".join(form.errors[field])


def dashboard_errors(html: str, field: str) -> str:
    """The dashboard form's errors beside ``field`` (before the next field starts)."""
    found = re.search(
        rf'name="{field}"(?:(?!name=").)*?class="field-errors" role="alert">([^<]*)<',
        html,
        re.DOTALL,
    )
    assert found is not None, f"no error beside {field}"
    return found.group(1)


# --- Memories: edit -------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "says"), MEMORY_CASES)
def test_an_over_long_memory_edit_is_refused_by_every_front_end(
    owner: Actor,
    staff_client: Client,
    admin_client: Client,
    memory: Memory,
    changes: dict[str, Any],
    says: str,
) -> None:
    field = next(name for name in changes if name != "scope")
    # The API.
    response = owner.patch(f"/api/memories/{memory.pk}", changes)
    assert response.status_code == 422, response.content
    assert says in response.json()["detail"]
    unchanged(memory)
    # The dashboard, a plain POST and htmx: the form again, the error beside the field.
    for headers in ({}, HTMX):
        response = staff_client.post(
            f"/memories/{memory.pk}/edit/", edit_data(memory, **as_form(changes)), headers=headers
        )
        assert response.status_code == 400
        assert says in dashboard_errors(response.content.decode(), field)
        unchanged(memory)
    # The admin's change form.
    response = admin_client.post(
        f"/admin/memories/memory/{memory.pk}/change/", change_form(memory, **as_form(changes))
    )
    assert says in admin_errors(response, field)
    unchanged(memory)
    # The service every front end calls (the CLI and spaceduck.store too).
    with pytest.raises(InvalidInput, match=re.escape(says)):
        edits.memory_edit(memory=memory, changes=changes, actor="t")
    memory.refresh_from_db()
    unchanged(memory)


# --- Memories: write ------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "says"), MEMORY_CASES)
def test_an_over_long_memory_write_is_refused_by_the_api_and_the_admin(
    owner: Actor, admin_client: Client, changes: dict[str, Any], says: str
) -> None:
    fields = {"content": "Alice keeps three bees in the garden.", **changes}
    response = owner.post("/api/memories", {"namespace": NS, "kind": "fact", **fields})
    assert response.status_code == 422, response.content
    assert says in response.json()["detail"]
    field = next(name for name in changes if name != "scope")
    response = admin_client.post("/admin/memories/memory/add/", add_form(**as_form(fields)))
    assert says in admin_errors(response, field)
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("changes", "says"),
    [case for case in MEMORY_CASES if "content" not in case.values[0]],
)
def test_the_write_path_refuses_what_the_api_schema_refuses(
    changes: dict[str, Any], says: str
) -> None:
    """spaceduck.store and MCP call memory_write without the API's schema; content over
    its limit stays the gate's too_long decision (as for an extracted memory)."""
    fields = {"content": "Alice keeps three bees in the garden.", "kind": "fact", **changes}
    scope = fields.pop("scope", "global")
    scope_id = fields.pop("scope_id", "")
    with pytest.raises(InvalidInput, match=re.escape(says)):
        memory_write(
            candidate_from_api(fields),
            namespace=NS,
            actor="t",
            scope=scope,
            scope_id=scope_id,
        )
    assert not Memory.objects.exists()


# --- Notes and facts ------------------------------------------------------------------------


def test_a_note_over_the_body_limit_is_refused_by_the_api_and_the_admin(
    owner: Actor, admin_client: Client
) -> None:
    body = "n" * (settings.MAX_NOTE_BODY_BYTES + 1)
    says = ("65,537", "SPACEDUCK_MAX_NOTE_BODY_BYTES")
    response = owner.post("/api/notes", {"namespace": NS, "body": body})
    assert response.status_code == 413, response.content
    assert all(word in response.json()["detail"] for word in says)
    response = admin_client.post("/admin/notes/note/add/", note_add_form(body=body))
    errors = admin_errors(response, "body")
    assert all(word in errors for word in says), errors
    assert not Note.objects.exists()


def test_a_fact_key_over_its_limit_is_refused_by_the_api_and_the_admin(
    owner: Actor, admin_client: Client
) -> None:
    key = "k" * 256
    response = owner.put(f"/api/facts/{NS}/{key}", {"value": 1})
    assert response.status_code == 422, response.content
    assert "at most 255 characters" in response.json()["detail"]
    response = admin_client.post(
        "/admin/memories/fact/add/",
        {"namespace": NS, "key": key, "value": "1", "ttl_ms": "", "provenance": ""},
    )
    assert "255 characters" in admin_errors(response, "key")
    assert not Fact.objects.exists()


def test_a_fact_value_over_its_limit_is_refused_by_the_api_and_the_admin_form(
    owner: Actor, admin_client: Client
) -> None:
    text = "v" * (settings.MAX_FACT_VALUE_BYTES + 1)  # a string counts as its text
    response = owner.put(f"/api/facts/{NS}/theme", {"value": text})
    assert response.status_code == 413, response.content
    assert "SPACEDUCK_MAX_FACT_VALUE_BYTES" in response.json()["detail"]
    response = admin_client.post(
        "/admin/memories/fact/add/",
        {"namespace": NS, "key": "theme", "value": f'"{text}"', "ttl_ms": "", "provenance": ""},
    )
    assert "SPACEDUCK_MAX_FACT_VALUE_BYTES" in admin_errors(response, "value")
    assert not Fact.objects.exists()


# --- What the forms count ------------------------------------------------------------------


def field_tag(html: str, name: str) -> str:
    """The <input> or <textarea> tag of the field ``name``."""
    match = re.search(rf'<(?:input|textarea)\b[^>]*\bname="{name}"[^>]*>', html)
    assert match is not None, f"no field {name}"
    return match.group(0)


def counted(html: str, name: str, attribute: str = "data-maxchars") -> int:
    """The limit the live counter (static/js/limits.js) shows under the field ``name``."""
    tag = field_tag(html, name)
    found = re.search(rf'\b{attribute}="(\d+)"', tag)
    assert found is not None, tag
    return int(found.group(1))


MEMORY_LIMITS = {"title": 200, "content": 1000, "summary": 1000, "scope_id": 255}


def test_the_rendered_forms_count_code_points_and_never_cut_a_paste(
    staff_client: Client, admin_client: Client, memory: Memory
) -> None:
    """No ``maxlength`` (the browser counts UTF-16 units and cuts a paste): the limit is the
    counter's, and the server's check refuses what is over it."""
    pages = {
        "dashboard": staff_client.get(f"/memories/{memory.pk}/").content.decode(),
        "admin add": admin_client.get("/admin/memories/memory/add/").content.decode(),
        "admin change": admin_client.get(
            f"/admin/memories/memory/{memory.pk}/change/"
        ).content.decode(),
    }
    for page, html in pages.items():
        for name, limit in MEMORY_LIMITS.items():
            assert counted(html, name) == limit, (page, name)
        assert "at most 20 tags, each at most 100 characters" in html, page
        assert "maxlength" not in html, page
        assert "js/limits.js" in html, page
    note = admin_client.get("/admin/notes/note/add/").content.decode()
    assert counted(note, "body", "data-maxbytes") == settings.MAX_NOTE_BODY_BYTES
    assert counted(note, "namespace") == 255
    assert counted(note, "kind") == 100
    fact = admin_client.get("/admin/memories/fact/add/").content.decode()
    assert counted(fact, "key") == 255
    assert counted(fact, "namespace") == 255
    assert counted(fact, "value", "data-maxbytes") == settings.MAX_FACT_VALUE_BYTES
    for html in (note, fact):
        assert "maxlength" not in html


EMOJI_TITLE = "\U0001f986" * 150  # 150 code points, 300 UTF-16 units


def test_a_title_of_150_emoji_the_api_took_saves_again_everywhere(
    owner: Actor, staff_client: Client, admin_client: Client, memory: Memory
) -> None:
    response = owner.patch(f"/api/memories/{memory.pk}", {"title": EMOJI_TITLE})
    assert response.status_code == 200, response.content
    memory.refresh_from_db()
    # The dashboard's edit form, saved as it is shown, with another change.
    for headers in ({}, HTMX):
        response = staff_client.post(
            f"/memories/{memory.pk}/edit/",
            edit_data(memory, summary=f"Saved again{' (htmx)' if headers else ''}."),
            headers=headers,
        )
        assert response.status_code in (200, 302), response.content.decode()[:500]
        memory.refresh_from_db()
        assert memory.title == EMOJI_TITLE
    assert memory.summary == "Saved again (htmx)."
    # The admin's change form.
    response = admin_client.post(
        f"/admin/memories/memory/{memory.pk}/change/",
        change_form(memory, summary="Saved in the admin."),
    )
    assert response.status_code == 302, response.content.decode()[:500]
    memory.refresh_from_db()
    assert (memory.title, memory.summary) == (EMOJI_TITLE, "Saved in the admin.")
    # One more code point is over the limit, wherever it is sent.
    title = EMOJI_TITLE + "\U0001f986" * 51
    response = owner.patch(f"/api/memories/{memory.pk}", {"title": title})
    assert response.status_code == 422
    assert "title should have at most 200 characters" in response.json()["detail"]


def test_a_pasted_content_of_5200_characters_is_refused_with_its_count_not_cut(
    owner: Actor, staff_client: Client, admin_client: Client, memory: Memory
) -> None:
    """The same words, exactly, from the API, the dashboard (plain and htmx) and the admin."""
    pasted = ("word " * 1040).strip() + "."  # 5,200 characters
    says = (
        "content should have at most 1,000 characters "
        "(SPACEDUCK_MAX_MEMORY_CONTENT_CHARS), not 5,200"
    )
    api = owner.patch(f"/api/memories/{memory.pk}", {"content": pasted})
    assert api.status_code == 422
    assert says in api.json()["detail"]
    for headers in ({}, HTMX):
        response = staff_client.post(
            f"/memories/{memory.pk}/edit/",
            edit_data(memory, content=pasted),
            headers=headers,
        )
        assert response.status_code == 400
        html = response.content.decode()
        assert dashboard_errors(html, "content") == says
        assert pasted in html  # the whole paste is shown again, to shorten
    admin = admin_client.post(
        f"/admin/memories/memory/{memory.pk}/change/", change_form(memory, content=pasted)
    )
    assert admin_errors(admin, "content") == says
    unchanged(memory)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        pytest.param(
            lambda owner: owner.put(f"/api/facts/{NS}/{'k' * 256}", {"value": 1}),
            "fact key should have at most 255 characters, not 256",
            id="fact-key",
        ),
        pytest.param(
            lambda owner: owner.post(
                "/api/notes", {"namespace": NS, "body": "b", "kind": "k" * 101}
            ),
            "kind should have at most 100 characters, not 101",
            id="note-kind",
        ),
        pytest.param(
            lambda owner: owner.post("/api/threads", {"namespace": NS, "title": "t" * 501}),
            "thread title should have at most 500 characters, not 501",
            id="thread-title",
        ),
    ],
)
def test_other_limits_use_the_same_words(owner: Actor, call: Any, says: str) -> None:
    response = call(owner)
    assert response.status_code == 422, response.content
    assert says in response.json()["detail"]
