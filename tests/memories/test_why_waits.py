"""Why a memory waits, and the counts of what waits (issue 40, item 3): the candidate queue
says "low confidence (0.55 < 0.70)" or "conflicts with #N" linked to the pair; a memory's
page shows its open conflict; the navigation's counts of candidates, conflicts and notes
come back out of band after every htmx decision, and from a poll every 30 s."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.models import Memory
from memories.write.services import memory_create
from notes.services import save_note
from tests.conftest import Actor
from tests.memories.test_conflict_inbox import flip

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def low_confidence() -> Memory:
    memory = memory_create(
        namespace="user:alice", kind="fact", content="The user may like chess.", actor="t"
    )
    Memory.objects.filter(pk=memory.pk).update(status="candidate", confidence=0.55)
    return memory


def nav_count(page: str, nav_id: str) -> str:
    """The count a navigation link shows ("" for none), and that it is an out-of-band swap."""
    found = re.search(
        rf'<a id="{nav_id}" href="[^"]*" hx-swap-oob="true">[^<]*(.*?)</a>', page, re.S
    )
    assert found is not None, f"{nav_id} is not swapped out of band"
    count = re.search(r'<span class="count">(\d+\+?)</span>', found.group(1))
    return count.group(1) if count else ""


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_the_queue_says_why_each_candidate_waits(
    owner: Actor, staff_client: Client, htmx: bool
) -> None:
    conflict = flip(owner)
    chess = low_confidence()
    page = staff_client.get("/review/memories/", headers=HTMX if htmx else {}).content.decode()
    old, new = conflict["old"]["id"], conflict["new"]["id"]
    row = page[page.index(f'id="candidate-{new}"') :]
    row = row[: row.index("</tr>")]
    assert f'conflicts with <a href="/memories/{old}/">#{old}</a>' in row
    assert f'#conflict-{conflict["id"]}">decide the pair</a>' in row
    assert "low confidence" not in row
    chess_row = page[page.index(f'id="candidate-{chess.pk}"') :]
    assert "low confidence (0.55 &lt; 0.70)" in chess_row[: chess_row.index("</tr>")]


def test_a_memorys_page_shows_its_open_conflict(owner: Actor, staff_client: Client) -> None:
    conflict = flip(owner)
    old, new = conflict["old"]["id"], conflict["new"]["id"]
    for this, other in ((new, old), (old, new)):
        page = staff_client.get(f"/memories/{this}/").content.decode()
        assert 'id="open-conflict"' in page
        assert f'<a href="/memories/{other}/">#{other}</a>' in page
        assert f'#conflict-{conflict["id"]}">Decide it in the conflict inbox' in page
    resolved = staff_client.post(
        "/review/conflicts/", {"ids": [conflict["id"]], "decision": "keep_both"}
    )
    assert resolved.status_code in (200, 302)
    assert 'id="open-conflict"' not in staff_client.get(f"/memories/{new}/").content.decode()


def why_waits(page: str) -> str:
    found = re.search(r'<dd class="why-waits">(.*?)</dd>', page, re.S)
    assert found is not None, "the page does not say why it waits"
    return " ".join(found.group(1).split())


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_a_memorys_page_says_why_it_waits_as_the_queue_does(
    owner: Actor, staff_client: Client, htmx: bool
) -> None:
    conflict = flip(owner)
    old, new = conflict["old"]["id"], conflict["new"]["id"]
    Memory.objects.filter(pk=new).update(confidence=0.8)  # a confident one, waiting for the pair
    headers = HTMX if htmx else {}
    page = staff_client.get(f"/memories/{new}/", headers=headers).content.decode()
    said = why_waits(page)
    assert said.startswith(f'conflicts with <a href="/memories/{old}/">#{old}</a>')
    assert f'#conflict-{conflict["id"]}">decide the pair</a>' in said
    assert "low confidence" not in said
    assert "so it waits for a person" not in page  # the old wording, for every candidate
    chess = low_confidence()
    page = staff_client.get(f"/memories/{chess.pk}/", headers=headers).content.decode()
    assert why_waits(page) == "low confidence (0.55 &lt; 0.70)"  # the queue's words
    queue = staff_client.get("/review/memories/").content.decode()
    row = queue[queue.index(f'id="candidate-{chess.pk}"') :]
    assert "low confidence (0.55 &lt; 0.70)" in row[: row.index("</tr>")]
    # An active memory does not wait.
    assert 'class="why-waits"' not in staff_client.get(f"/memories/{old}/").content.decode()


def test_a_decision_in_the_queue_updates_every_count(owner: Actor, staff_client: Client) -> None:
    flip(owner)
    chess = low_confidence()
    save_note("agent:x", "Page the DBA at night.", status="pending", id="n-1")
    before = staff_client.get("/nav/counts/", headers=HTMX).content.decode()
    assert (nav_count(before, "review-nav"), nav_count(before, "notes-nav")) == ("2", "1")
    assert nav_count(before, "conflicts-nav") == "1"
    after = staff_client.post(
        "/review/memories/", {"row": f"approve:{chess.pk}"}, headers=HTMX
    ).content.decode()
    assert nav_count(after, "review-nav") == "1"
    assert nav_count(after, "conflicts-nav") == "1"
    assert nav_count(after, "notes-nav") == "1"


def test_deciding_the_last_note_clears_its_count(staff_client: Client) -> None:
    save_note("agent:x", "Page the DBA at night.", status="pending", id="n-1")
    save_note("agent:x", "Drain the node first.", status="pending", id="n-2")
    first = staff_client.post("/notes/n-1/decision/", {"status": "accepted"}, headers=HTMX)
    assert nav_count(first.content.decode(), "notes-nav") == "1"
    assert 'id="note-' in first.content.decode()  # the row itself still comes back
    last = staff_client.post("/notes/n-2/decision/", {"status": "rejected"}, headers=HTMX)
    assert nav_count(last.content.decode(), "notes-nav") == ""


def test_every_page_polls_the_counts_every_30_seconds(staff_client: Client) -> None:
    page = staff_client.get("/").content.decode()
    assert 'hx-get="/nav/counts/" hx-trigger="every 30s" hx-swap="none"' in page


def test_the_counts_are_for_staff_only(client: Client) -> None:
    assert client.get("/nav/counts/")["Location"].startswith("/admin/login/")
    assert "HX-Redirect" in client.get("/nav/counts/", headers=HTMX)
