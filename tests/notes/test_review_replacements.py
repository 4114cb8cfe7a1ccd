"""The approval gate says, for each note a proposal would replace, whether it is
superseded already and by what."""

from __future__ import annotations

import pytest
from django.test import Client

from notes.selectors import review_queue
from notes.services import save_note

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
NS = "agent:oncall"


@pytest.fixture
def contested() -> None:
    """old is hidden by accepted fix-1; two pending proposals (fix-2, fix-3) target it too."""
    save_note(NS, "Restart the <b>api</b> pods.", id="old")
    save_note(NS, "Page the DBA first.", id="other")
    save_note(NS, "Drain the node first.", supersedes=["old"], id="fix-1")
    save_note(NS, "Cordon the node.", status="pending", supersedes=["old", "other"], id="fix-2")
    save_note(NS, "Scale to zero.", status="pending", supersedes=["old"], id="fix-3")


def test_the_queue_knows_who_else_supersedes_each_replaced_note(contested: None) -> None:
    rows = {row.note.uid: row for row in review_queue()}
    assert list(rows) == ["fix-2", "fix-3"]
    old, other = rows["fix-2"].replaces
    assert old.note.uid == "old"
    assert [note.uid for note in old.hidden_by] == ["fix-1"]
    assert [note.uid for note in old.proposed_by] == ["fix-3"]  # never the row's own note
    assert (other.note.uid, other.others) == ("other", [])


def test_the_page_shows_already_superseded_replacements(
    staff_client: Client, contested: None
) -> None:
    html = staff_client.get("/notes/review/").content.decode()
    row = html.split('id="note-', 1)[1].split("</tr>", 1)[0]
    assert "Cordon the node." in row
    assert "replaces <code>old</code> (accepted)" in row
    assert ('already superseded by <a href="/notes/fix-1/"><code>fix-1</code></a></span>') in row
    assert 'also targeted by <a href="/notes/fix-3/"><code>fix-3</code></a> (pending)' in row
    assert "replaces <code>other</code> (accepted)</summary>" in row  # nothing else on it
    assert "Restart the &lt;b&gt;api&lt;/b&gt; pods." in row


def test_a_decided_row_keeps_its_replacements(staff_client: Client, contested: None) -> None:
    response = staff_client.post("/notes/fix-3/decision/", {"status": "accepted"}, headers=HTMX)
    fragment = response.content.decode()
    assert "<strong>accepted</strong>" in fragment
    assert "replaces <code>old</code> (accepted)" in fragment
    assert 'already superseded by <a href="/notes/fix-1/"><code>fix-1</code></a>' in fragment
    # fix-2, still pending, now sees fix-3 among the accepted superseders of old.
    html = staff_client.get("/notes/review/").content.decode()
    assert 'already superseded by <a href="/notes/fix-1/"><code>fix-1</code></a>, ' in html
    assert '<a href="/notes/fix-3/"><code>fix-3</code></a></span>' in html
