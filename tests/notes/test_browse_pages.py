"""The notes browser, a note's page, and switching note search on from the dashboard."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from notes.models import Note, NoteSearchKind
from notes.services import enable_note_search, save_note

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture
def runbooks() -> None:
    """agent:oncall: rb-1 superseded by accepted rb-2; rb-3 proposes to replace rb-2."""
    save_note("agent:oncall", "Restart the <b>api</b> pods first.", kind="runbook", id="rb-1")
    save_note(
        "agent:oncall",
        "Drain the node, then restart the api pods.",
        kind="runbook",
        supersedes=["rb-1"],
        id="rb-2",
    )
    save_note(
        "agent:oncall",
        "Cordon, drain, then restart the api pods.",
        kind="runbook",
        status="pending",
        supersedes=["rb-2"],
        id="rb-3",
    )
    save_note("user:alice", "Alice prefers tea over coffee.", kind="preference", id="tea")
    save_note("user:alice", "Alice asked for a refund.", status="rejected", id="refund")


def page(
    client: Client, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> str:
    response = client.get("/notes/", params or {}, headers=headers)
    assert response.status_code == 200, response.content
    return response.content.decode()


def note_ids(html: str) -> list[str]:
    """Note uids listed in the browser's table, in order."""
    return re.findall(r'class="note-link" href="/notes/([^/]+)/"', html)


# --- who may look ------------------------------------------------------------------


def test_people_who_are_not_staff_are_sent_to_the_login(
    client: Client, django_user_model, runbooks: None
) -> None:  # type: ignore[no-untyped-def]
    for path in ("/notes/", "/notes/rb-1/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")
    response = client.post("/notes/search/enable/", {"kind": "user"})
    assert response.status_code == 302
    assert not NoteSearchKind.objects.exists()

    user = django_user_model.objects.create_user("pat", password="pw-pat-12345", is_staff=False)
    client.force_login(user)
    assert client.get("/notes/").status_code == 302
    assert client.post("/notes/search/enable/", {"kind": "user"}).status_code == 302
    assert not NoteSearchKind.objects.exists()


# --- browsing ----------------------------------------------------------------------


def test_by_default_it_shows_what_readers_see_newest_first(
    staff_client: Client, runbooks: None
) -> None:
    html = page(staff_client)
    # rb-1 is hidden by rb-2, rb-3 is pending, refund is rejected.
    assert note_ids(html) == ["tea", "rb-2"]
    assert "2 notes match, newest first." in html
    assert 'action="/notes/"' in html  # a plain GET form without JavaScript


def test_filters_are_the_stores_filters(staff_client: Client, runbooks: None) -> None:
    assert note_ids(page(staff_client, {"status": "any", "include_superseded": "1"})) == [
        "refund",
        "tea",
        "rb-3",
        "rb-2",
        "rb-1",
    ]
    assert note_ids(page(staff_client, {"status": "pending"})) == ["rb-3"]
    assert note_ids(page(staff_client, {"status": "pending,rejected"})) == ["refund", "rb-3"]
    assert note_ids(page(staff_client, {"namespace": "agent:oncall", "status": "any"})) == [
        "rb-3",
        "rb-2",
    ]
    assert note_ids(page(staff_client, {"namespace_kind": "user", "status": "any"})) == [
        "refund",
        "tea",
    ]
    assert note_ids(
        page(staff_client, {"kind": "runbook", "include_superseded": "on", "status": "accepted"})
    ) == ["rb-2", "rb-1"]
    # A namespace is canonicalised the way the API does it.
    assert note_ids(page(staff_client, {"namespace": " user:alice "})) == ["tea"]


def test_each_note_links_what_it_supersedes_and_what_supersedes_it(
    staff_client: Client, runbooks: None
) -> None:
    html = page(staff_client, {"status": "any", "include_superseded": "1"})
    assert (
        '<a class="supersedes-link" href="/notes/rb-1/"><code>rb-1</code></a> '
        '<span class="sub">accepted</span>'
    ) in html
    assert (
        '<a class="superseded-by-link" href="/notes/rb-2/"><code>rb-2</code></a> '
        '<span class="sub">accepted, hides it</span>'
    ) in html
    assert (
        '<a class="superseded-by-link" href="/notes/rb-3/"><code>rb-3</code></a> '
        '<span class="sub">pending</span>'
    ) in html
    assert 'class="note-row status-accepted is-superseded"' in html  # rb-1


def test_stored_text_is_escaped(staff_client: Client, runbooks: None) -> None:
    save_note(
        'user:<script>alert("ns")</script>',
        "<img src=x onerror=alert(1)>",
        kind="<i>k</i>",
        tags=["<b>t</b>"],
        id="xss",
    )
    html = page(staff_client, {"status": "any"})
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>alert" not in html
    assert "&lt;i&gt;k&lt;/i&gt;" in html
    assert "&lt;b&gt;t&lt;/b&gt;" in html
    assert "Restart the &lt;b&gt;api&lt;/b&gt; pods" in page(
        staff_client, {"include_superseded": "1"}
    )
    detail = staff_client.get("/notes/xss/").content.decode()
    assert "<img src=x" not in detail
    assert "&lt;img src=x onerror=alert(1)&gt;" in detail


def test_with_htmx_only_the_list_comes_back(staff_client: Client, runbooks: None) -> None:
    html = page(staff_client, {"status": "pending"}, headers=HTMX)
    assert html.strip().startswith('<section id="note-list">')
    assert "<html" not in html
    assert 'id="note-filters"' not in html
    assert note_ids(html) == ["rb-3"]


def test_pages_hold_25_notes_and_link_to_the_next(staff_client: Client) -> None:
    for number in range(30):
        save_note("user:pages", f"note number {number}", id=f"p{number:02d}")
    first = page(staff_client, {"namespace": "user:pages"})
    assert len(note_ids(first)) == 25
    assert note_ids(first)[0] == "p29"
    assert "page 1 of 2" in first
    assert 'href="?namespace=user%3Apages&amp;page=2"' in first
    second = page(staff_client, {"namespace": "user:pages", "page": "2"})
    assert note_ids(second) == ["p04", "p03", "p02", "p01", "p00"]
    assert 'rel="prev" href="?namespace=user%3Apages&amp;page=1"' in second


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"status": "approved"}, "status &#x27;approved&#x27; is not one of"),
        ({"status": "accepted,"}, "status &#x27;&#x27; is not one of"),
        ({"namespace": "team:x"}, "invalid namespace"),
        ({"namespace": "user:"}, "invalid namespace"),
        ({"namespace_kind": "team"}, "Select a valid choice"),
        ({"namespace": "user:a", "namespace_kind": "agent"}, "is not of kind"),
        ({"include_superseded": "maybe"}, "must be on or off"),
        ({"page": "two"}, "Enter a whole number"),
        ({"page": "0"}, "greater than or equal to 1"),
        ({"kind": "x" * 101}, "kind should have at most 100 characters, not 101"),
        ({"kind": "a\x00b"}, "Null characters are not allowed"),
        ({"q": "x" * 1001}, "at most 1,000 characters"),
    ],
)
def test_bad_filters_are_a_400_that_says_what_is_wrong(
    staff_client: Client, runbooks: None, params: dict[str, str], message: str
) -> None:
    for headers in ({}, HTMX):
        response = staff_client.get("/notes/", params, headers=headers)
        assert response.status_code == 400
        html = response.content.decode()
        assert "These filters cannot be used" in html
        assert message in html


def test_a_page_past_the_end_is_a_404_with_a_message(staff_client: Client, runbooks: None) -> None:
    response = staff_client.get("/notes/", {"page": "9"})
    assert response.status_code == 404
    assert "page 9 is past the last page (1)" in response.content.decode()


def test_get_never_changes_anything(staff_client: Client, runbooks: None) -> None:
    before = list(Note.objects.values_list("uid", "status", "status_by"))
    staff_client.get("/notes/", {"q": "restart", "namespace_kind": "agent"})
    staff_client.get("/notes/rb-3/")
    assert staff_client.get("/notes/search/enable/", {"kind": "agent"}).status_code == 405
    assert staff_client.get("/notes/rb-3/decision/").status_code == 405
    assert list(Note.objects.values_list("uid", "status", "status_by")) == before
    assert not NoteSearchKind.objects.exists()


# --- searching ---------------------------------------------------------------------


def test_search_runs_the_api_search_with_the_filters(staff_client: Client, runbooks: None) -> None:
    enable_note_search("agent")
    enable_note_search("user")
    html = page(staff_client, {"q": "restart api", "namespace_kind": "agent"})
    assert note_ids(html) == ["rb-2"]  # rb-1 superseded, rb-3 pending
    assert "score " in html
    assert "(searched: agent)" in html
    assert set(
        note_ids(
            page(
                staff_client,
                {
                    "q": "restart",
                    "namespace": "agent:oncall",
                    "status": "any",
                    "include_superseded": "1",
                },
            )
        )
    ) == {"rb-1", "rb-2", "rb-3"}
    assert note_ids(page(staff_client, {"q": "restart", "kind": "preference"})) == []
    assert note_ids(page(staff_client, {"q": "tea", "kind": "preference"})) == ["tea"]


def test_without_a_kind_search_spans_every_enabled_kind(
    staff_client: Client, runbooks: None
) -> None:
    html = page(staff_client, {"q": "alice"})
    assert "Note search is not enabled for any namespace kind yet" in html
    enable_note_search("user")
    html = page(staff_client, {"q": "alice", "status": "any"})
    assert note_ids(html) == ["refund", "tea"] or note_ids(html) == ["tea", "refund"]
    assert "(searched: user)" in html


def test_search_text_is_literal_and_escaped(staff_client: Client, runbooks: None) -> None:
    enable_note_search("agent")
    for query in ['NOT "restart', "api* NEAR(x)", "body: <b>", "-", '"']:
        html = page(staff_client, {"q": query, "namespace_kind": "agent"})
        assert "<b>" not in html.split('id="note-list"')[1].split("</section>")[0]
    assert "&lt;b&gt;" in page(staff_client, {"q": "<b>", "namespace_kind": "agent"})


def test_search_in_a_kind_without_search_is_a_4xx_offering_to_enable_it(
    staff_client: Client, runbooks: None
) -> None:
    response = staff_client.get("/notes/", {"q": "restart", "namespace": "agent:oncall"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "note search is not enabled for namespace kind &#x27;agent&#x27;" in html
    assert '<input type="hidden" name="kind" value="agent">' in html
    assert not NoteSearchKind.objects.exists()


# --- enabling search ---------------------------------------------------------------


def test_the_page_lists_enabled_kinds_and_offers_the_others(staff_client: Client) -> None:
    enable_note_search("user")
    html = page(staff_client)
    assert '<code class="search-kind">user</code>' in html
    form = html.split('id="enable-search"')[1].split("</form>")[0]
    assert 'name="csrfmiddlewaretoken"' in form
    assert '<option value="agent">' in form
    assert '<option value="user">' not in form


def test_enabling_search_is_a_post_that_redirects_with_a_flash(
    staff_client: Client, runbooks: None
) -> None:
    response = staff_client.post(
        "/notes/search/enable/", {"kind": "agent", "next": "/notes/?q=restart"}
    )
    assert (response.status_code, response["Location"]) == (302, "/notes/?q=restart")
    assert list(NoteSearchKind.objects.values_list("kind", flat=True)) == ["agent"]
    html = page(staff_client, {"q": "restart"})
    assert "Note search is on for agent namespaces: 3 existing notes indexed." in html
    assert note_ids(html) == ["rb-2"]
    again = staff_client.post("/notes/search/enable/", {"kind": "agent"})
    assert (again.status_code, again["Location"]) == (302, "/notes/")
    assert "Note search was already on for agent namespaces." in page(staff_client)


def test_enabling_search_ignores_a_next_that_leaves_the_site(staff_client: Client) -> None:
    response = staff_client.post(
        "/notes/search/enable/", {"kind": "user", "next": "//evil.example/"}
    )
    assert response["Location"] == "/notes/"


def test_with_htmx_enabling_answers_with_the_section_and_a_flash(
    staff_client: Client, runbooks: None
) -> None:
    response = staff_client.post("/notes/search/enable/", {"kind": "user"}, headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Trigger"] == "notes-search-enabled"
    html = response.content.decode()
    assert html.strip().startswith('<section id="search-kinds">')
    assert 'id="flash" role="status" aria-live="polite" hx-swap-oob="innerHTML"' in html
    assert "Note search is on for user namespaces: 2 existing notes indexed." in html
    assert '<code class="search-kind">user</code>' in html


@pytest.mark.parametrize("kind", ["", "team", "USER", "user:alice"])
def test_enabling_an_invalid_kind_is_a_4xx_with_a_message(staff_client: Client, kind: str) -> None:
    response = staff_client.post("/notes/search/enable/", {"kind": kind})
    assert response.status_code == 422
    page = html.unescape(response.content.decode())  # a page with the navigation, the message
    assert f"kind {kind!r} is not a namespace kind: workflow, agent, user, global" in page
    assert 'id="error-page"' in page
    assert 'href="/review/memories/"' in page
    htmx = staff_client.post("/notes/search/enable/", {"kind": kind}, headers=HTMX)
    assert htmx.status_code == 422
    assert "Search was not enabled: kind" in htmx.content.decode()
    assert not NoteSearchKind.objects.exists()


def test_enabling_needs_the_csrf_token(django_user_model) -> None:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("csrf", password="pw-csrf-123", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post("/notes/search/enable/", {"kind": "user"}).status_code == 403
    assert not NoteSearchKind.objects.exists()


# --- a note's page -----------------------------------------------------------------


def test_a_notes_page_shows_both_directions_of_supersession(
    staff_client: Client, runbooks: None
) -> None:
    response = staff_client.get("/notes/rb-2/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Drain the node, then restart the api pods." in html
    assert "Readers see this note." in html
    assert '<a class="supersedes-link" href="/notes/rb-1/"><code>rb-1</code></a>' in html
    assert '<a class="superseded-by-link" href="/notes/rb-3/"><code>rb-3</code></a>' in html
    assert "pending: would hide this note once accepted" in html

    old = staff_client.get("/notes/rb-1/").content.decode()
    assert "Hidden from readers: superseded by" in old
    assert '<a href="/notes/rb-2/"><code>rb-2</code></a>' in old
    assert "Restart the &lt;b&gt;api&lt;/b&gt; pods first." in old


def test_a_pending_notes_page_can_decide_it_and_come_back(
    staff_client: Client, runbooks: None
) -> None:
    html = staff_client.get("/notes/rb-3/").content.decode()
    assert 'action="/notes/rb-3/decision/"' in html
    assert '<input type="hidden" name="next" value="/notes/rb-3/">' in html
    response = staff_client.post(
        "/notes/rb-3/decision/", {"status": "accepted", "next": "/notes/rb-3/"}
    )
    assert (response.status_code, response["Location"]) == (302, "/notes/rb-3/")
    html = staff_client.get("/notes/rb-3/").content.decode()
    assert "Note rb-3 accepted." in html
    assert "Readers see this note." in html
    assert 'action="/notes/rb-3/decision/"' not in html


def test_an_unknown_note_is_a_404_with_a_message(staff_client: Client) -> None:
    response = staff_client.get("/notes/nope/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "No such note" in html
    assert "note &#x27;nope&#x27; not found" in html


def test_a_malformed_note_id_is_a_422_with_a_message(staff_client: Client) -> None:
    response = staff_client.get("/notes/has%20a%20space/")
    assert response.status_code == 422
    assert "must not contain" in response.content.decode()
