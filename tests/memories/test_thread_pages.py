"""The thread pages: threads by latest activity per namespace, in pages; a thread's messages
with roles and times, compaction summaries marked, each message's extraction linked."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.models import Extraction, Thread
from memories.upkeep.compaction import compact_conversation
from memories.write.ingest import message_ingest
from memories.write.services import create_thread, save_message

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "user:alice"


def thread_links(html: str) -> list[str]:
    return re.findall(r'class="thread-link" href="/threads/([^/"]+)/"', html)


def message_ids(html: str) -> list[str]:
    return re.findall(r'<code class="sub">([^<]+)</code>', html)


# --- The list -------------------------------------------------------------------------------


def test_threads_are_staff_only(client: Client) -> None:
    thread = create_thread(NS)
    for path in ("/threads/", f"/threads/{thread.pk}/"):
        response = client.get(path)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


def test_threads_of_a_namespace_the_most_recently_active_first(staff_client: Client) -> None:
    now = timezone.now()
    quiet = create_thread(NS, "Quiet")
    busy = create_thread(NS, "Busy")
    create_thread("user:bob", "Bob's")
    Thread.objects.filter(pk=quiet.pk).update(updated_at=now - timedelta(days=2))
    Thread.objects.filter(pk=busy.pk).update(updated_at=now - timedelta(days=3))
    save_message(busy.pk, "user", "hello")  # activity moves it to the top
    html = staff_client.get("/threads/", {"namespace": NS}).content.decode()
    assert thread_links(html) == [busy.pk, quiet.pk]
    assert "Bob&#x27;s" not in html
    assert "2 threads in <code>user:alice</code>" in html
    row = html[html.index("Busy") :]
    assert '<td data-label="Messages">1</td>' in row[: row.index("</tr>")]  # its message count
    everything = staff_client.get("/threads/").content.decode()
    assert len(thread_links(everything)) == 3


def test_threads_come_in_pages(staff_client: Client) -> None:
    now = timezone.now()
    made = []
    for i in range(55):
        thread = create_thread(NS, f"Thread {i:02d}")
        Thread.objects.filter(pk=thread.pk).update(updated_at=now - timedelta(minutes=i))
        made.append(thread.pk)
    first = staff_client.get("/threads/", {"namespace": NS}).content.decode()
    assert thread_links(first) == made[:50]
    older = re.search(r'class="older" rel="next" href="\?([^"]+)"', first)
    assert older is not None
    second = staff_client.get("/threads/?" + older[1].replace("&amp;", "&"))
    assert thread_links(second.content.decode()) == made[50:]
    newer = re.search(r'class="newer" rel="prev" href="\?([^"]+)"', second.content.decode())
    assert newer is not None
    back = staff_client.get("/threads/?" + newer[1].replace("&amp;", "&")).content.decode()
    assert thread_links(back) == made[:50]


@pytest.mark.parametrize("query", ["namespace=nobody", "after=garbage", "before=12-a%0Ab"])
def test_bad_thread_filters_are_a_400_with_the_error(staff_client: Client, query: str) -> None:
    for headers in ({}, HTMX):
        response = staff_client.get(f"/threads/?{query}", headers=headers)
        assert response.status_code == 400
        assert "These filters cannot be used" in response.content.decode()


def test_htmx_gets_only_the_thread_list(staff_client: Client) -> None:
    create_thread(NS, "Plans")
    fragment = staff_client.get("/threads/", {"namespace": NS}, headers=HTMX).content.decode()
    assert fragment.strip().startswith('<section id="thread-list">')
    assert "<html" not in fragment


def test_a_thread_id_the_url_cannot_carry_is_listed_without_a_link(staff_client: Client) -> None:
    Thread.objects.create(id="team/alpha", namespace=NS, title="Slashed")
    html = staff_client.get("/threads/").content.decode()
    assert "Slashed" in html
    assert thread_links(html) == []


# --- One thread -----------------------------------------------------------------------------


def test_a_thread_shows_messages_roles_times_and_their_extractions(
    staff_client: Client,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    thread = create_thread(NS, "Moving")
    with django_capture_on_commit_callbacks(execute=True):
        said = message_ingest(thread.pk, "user", "I live in Lisbon.", id="m-user")
        message_ingest(thread.pk, "assistant", "Noted!", id="m-assistant")
    message_ingest(thread.pk, "user", "I like tea.", id="m-waiting")  # not run yet
    save_message(thread.pk, "system", "You are helpful.", id="m-system")
    # Keys in an order both databases keep (PostgreSQL's jsonb sorts shorter keys first).
    save_message(thread.pk, "tool", {"city": "Lisbon", "temperature": 21}, id="m-tool")
    html = staff_client.get(f"/threads/{thread.pk}/").content.decode()
    assert message_ids(html) == ["m-user", "m-assistant", "m-waiting", "m-system", "m-tool"]
    for role in ("user", "assistant", "system", "tool"):
        assert f'<span class="role">{role}</span>' in html
    extraction = said.extraction
    assert extraction is not None
    assert (
        f'<a class="extraction-link" href="/extractions/{extraction.pk}/">'
        f"extraction #{extraction.pk}</a>" in html
    )
    assert 'extraction-status-done">done</span>' in html
    assert 'extraction-status-queued">queued</span>' in html
    assert "not extracted (system message)" in html
    assert (
        '<pre class="content json">{\n  &quot;city&quot;: &quot;Lisbon&quot;,\n'
        "  &quot;temperature&quot;: 21" in html
    )
    assert "5 messages." in html
    assert f'href="/extractions/?thread={thread.pk}"' in html


def test_compaction_summaries_are_marked(staff_client: Client) -> None:
    thread = create_thread(NS, "Long")
    for i in range(8):
        save_message(thread.pk, "user", f"Message number {i} about the garden and its roses.")
    summary = compact_conversation(thread.pk, budget=40)
    assert summary is not None
    html = staff_client.get(f"/threads/{thread.pk}/").content.decode()
    marked = re.findall(
        r'<li id="message-\d+" class="message role-system compaction-summary">', html
    )
    assert len(marked) == 1
    assert "compaction summary" in html
    assert "earlier message" in html
    assert html.count("compaction-summary") == 1


def test_stored_text_is_escaped(staff_client: Client) -> None:
    thread = create_thread(NS, "<b>title</b>")
    save_message(thread.pk, "user", "<script>alert(1)</script>")
    html = staff_client.get(f"/threads/{thread.pk}/").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>title</b>" not in html
    listing = staff_client.get("/threads/").content.decode()
    assert "<b>title</b>" not in listing


def test_a_long_thread_pages_from_the_newest_end(staff_client: Client) -> None:
    thread = create_thread(NS, "Long")
    start = timezone.now() - timedelta(hours=1)
    for i in range(130):
        save_message(
            thread.pk, "user", f"m{i}", id=f"m-{i:03d}", created_at=start + timedelta(seconds=i)
        )
    newest = staff_client.get(f"/threads/{thread.pk}/").content.decode()
    assert message_ids(newest) == [f"m-{i:03d}" for i in range(30, 130)]
    assert 'class="newer"' not in newest
    older = re.search(r'class="older" href="\?before=([^"]+)"', newest)
    assert older is not None
    page = staff_client.get(f"/threads/{thread.pk}/?before={older[1]}").content.decode()
    assert message_ids(page) == [f"m-{i:03d}" for i in range(30)]
    assert 'class="older"' not in page
    newer = re.search(r'class="newer" href="\?after=([^"]+)"', page)
    assert newer is not None
    back = staff_client.get(f"/threads/{thread.pk}/?after={newer[1]}").content.decode()
    assert message_ids(back) == [f"m-{i:03d}" for i in range(30, 130)]
    fragment = staff_client.get(f"/threads/{thread.pk}/?before={older[1]}", headers=HTMX)
    assert fragment.content.decode().strip().startswith('<section id="messages">')


@pytest.mark.parametrize("query", ["before=nope", "after=m%0A1", "before=m-1&after=m-1"])
def test_a_bad_message_cursor_is_a_400_that_says_so(staff_client: Client, query: str) -> None:
    thread = create_thread(NS)
    save_message(thread.pk, "user", "hello", id="m-1")
    response = staff_client.get(f"/threads/{thread.pk}/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="form-errors"' in html
    assert "Showing the newest messages instead." in html
    assert message_ids(html) == ["m-1"]


def test_an_unknown_thread_is_a_404(staff_client: Client) -> None:
    assert staff_client.get("/threads/no-such-thread/").status_code == 404
    assert staff_client.get(f"/threads/{'x' * 100}/").status_code == 404


def test_the_extraction_page_links_back_to_its_thread(staff_client: Client) -> None:
    thread = create_thread(NS, "Chat")
    extraction = message_ingest(thread.pk, "user", "I live in Lisbon.").extraction
    assert extraction is not None
    assert Extraction.objects.filter(thread_id=thread.pk).exists()
    html = staff_client.get(f"/extractions/{extraction.pk}/").content.decode()
    assert f'class="thread-link" href="/threads/{thread.pk}/"' in html
