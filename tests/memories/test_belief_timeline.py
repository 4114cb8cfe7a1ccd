"""A timeline of each belief (issue 40 item 12): a memory's page, a person's page and the
claim's own page show the values a claim had over time (Lyon, then Nantes, then Lille), with
dates, sources and who decided each change; the reads stay bounded (a LIMIT, the claim index).
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from memories.models import Extraction, Memory
from memories.store import timeline
from memories.write.services import memory_create
from tests.conftest import Actor
from tests.memories.test_beliefs_api import NS, say

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
CLAIM = f"namespace={NS}&subject=user&attribute=location"


@pytest.fixture
def moves(owner: Actor) -> list[Memory]:
    """Lyon, then Nantes, then Lille: each said in its own conversation."""
    say(owner, ["I live in Lyon."], ["I moved to Nantes last year."], ["We just moved to Lille."])
    held = Memory.objects.filter(namespace=NS, claim_attribute="location").order_by("id")
    assert [m.claim_value for m in held] == ["lyon", "nantes", "lille"]
    return list(held)


def _extraction_of(memory: Memory) -> int:
    return Extraction.objects.get(message_id=memory.source_message_id).pk


def values(html: str) -> list[str]:
    return re.findall(r'<p class="belief-value"><strong>([^<]*)</strong>', html)


def test_the_selector_lists_the_values_oldest_first_with_who_decided(moves: list[Memory]) -> None:
    found = timeline.claim_timeline(timeline.Claim(NS, "user", "location"))
    assert [b.memory.claim_value for b in found.beliefs] == ["lyon", "nantes", "lille"]
    lyon, nantes, lille = found.beliefs
    assert lyon.until is not None
    assert nantes.since <= lyon.until  # superseded when Nantes was learnt
    assert lille.until is None  # holds now
    # Each decided by the extraction of the message that said it (the next one for Lyon's end).
    assert [(d.event, d.actor) for d in lyon.decisions] == [
        ("created", f"extraction:{_extraction_of(lyon.memory)}"),
        ("superseded", f"extraction:{_extraction_of(nantes.memory)}"),
    ]
    assert lyon.message_id  # learnt from a message in a thread
    assert lyon.memory.source_thread_id
    assert not found.more


def test_the_memory_page_shows_its_claims_timeline(
    staff_client: Client, moves: list[Memory]
) -> None:
    lille = moves[-1]
    for headers in ({}, HTMX):
        html = staff_client.get(f"/memories/{lille.pk}/", headers=headers).content.decode()
        assert values(html) == ["lyon", "nantes", "lille"]
        assert "(this memory)" in html
        assert f'href="/memories/{moves[0].pk}/"' in html
        assert f"/threads/{moves[0].source_thread_id}/" in html
        who = _extraction_of(moves[1])
        assert f"superseded</strong> by <code>extraction:{who}</code>" in html
        assert "/beliefs/?namespace=user%3Aalice&amp;subject=user&amp;attribute=location" in html


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_the_claims_own_page(
    staff_client: Client, moves: list[Memory], headers: dict[str, str]
) -> None:
    response = staff_client.get(f"/beliefs/?{CLAIM}", headers=headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert values(html) == ["lyon", "nantes", "lille"]
    assert ("<html" in html) is not bool(headers)


def test_a_persons_page_shows_the_beliefs_that_changed(
    staff_client: Client, moves: list[Memory]
) -> None:
    html = staff_client.get(f"/people/?namespace={NS}").content.decode()
    assert "What we believed when" in html
    section = html.split('id="person-beliefs"')[1].split("</section>")[0]
    assert values(section) == ["lyon", "nantes", "lille"]
    assert "<code>location</code>" in section
    with CaptureQueriesContext(connection) as captured:
        timeline.changed_beliefs(NS)
    # The claims that changed, the newest values of each (one query a claim), their decisions.
    assert len(captured.captured_queries) == 3


def test_a_decision_by_a_person_is_named(staff_client: Client, moves: list[Memory]) -> None:
    nantes = moves[1]
    staff_client.post(f"/memories/{nantes.pk}/reverse/")
    html = staff_client.get(f"/beliefs/?{CLAIM}").content.decode()
    assert "restored</strong> by <code>staff:staff</code>: supersession reversed" in html
    assert "archived</strong> by <code>staff:staff</code>" in html


@pytest.mark.parametrize("headers", [{}, HTMX])
@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("namespace=bad%20name&attribute=x", 400, "namespace"),
        ("namespace=bad%20name", 400, "namespace"),
        (f"namespace={NS}&after_attribute={'x' * 300}", 400, "at most 255 characters"),
        (f"namespace={NS}&attribute={'x' * 300}", 400, "at most 255 characters"),
        (f"namespace={NS}&subject=user&attribute=eye_colour", 404, "No memory"),
    ],
)
def test_a_bad_or_unknown_claim_is_a_4xx_with_the_reason(
    staff_client: Client, headers: dict[str, str], query: str, status: int, message: str
) -> None:
    response = staff_client.get(f"/beliefs/?{query}", headers=headers)
    assert response.status_code == status
    assert message in response.content.decode()


def test_the_timeline_is_bounded(staff_client: Client) -> None:
    claim = {"claim_subject": "user", "claim_attribute": "mood", "claim_polarity": "affirmed"}
    for n in range(timeline.TIMELINE_LIMIT + 5):
        memory = memory_create(namespace=NS, kind="fact", content=f"Mood {n}.", actor="t")
        Memory.objects.filter(pk=memory.pk).update(claim_value=f"m{n}", **claim)
    found = timeline.claim_timeline(timeline.Claim(NS, "user", "mood"))
    assert len(found.beliefs) == timeline.TIMELINE_LIMIT
    assert found.more
    assert found.beliefs[-1].memory.claim_value == f"m{timeline.TIMELINE_LIMIT + 4}"  # newest
    with CaptureQueriesContext(connection) as captured:
        timeline.claim_timeline(timeline.Claim(NS, "user", "mood"))
    assert len(captured.captured_queries) == 2  # the memories, then their decisions
    assert "ORDER BY" in captured.captured_queries[0]["sql"]
    memories_sql = captured.captured_queries[0]["sql"]
    assert f"LIMIT {timeline.TIMELINE_LIMIT + 1}" in memories_sql
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {memories_sql}")
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "memory_claim_idx" in plan
        assert "TEMP B-TREE" not in plan  # walked newest first, nothing sorted
    html = staff_client.get(f"/beliefs/?namespace={NS}&subject=user&attribute=mood").content
    assert "Older values are not shown." in html.decode()


# --- QA walk of issue 40, item 7: /beliefs/ on its own lists, never a 400 ----------------


def _claim(subject: str, attribute: str, value: str, namespace: str = NS) -> Memory:
    memory = memory_create(namespace=namespace, kind="fact", content=f"{value}.", actor="t")
    Memory.objects.filter(pk=memory.pk).update(
        claim_subject=subject, claim_attribute=attribute, claim_value=value
    )
    return memory


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_beliefs_alone_offers_the_namespaces_that_hold_a_claim(
    staff_client: Client, headers: dict[str, str]
) -> None:
    _claim("user", "location", "lyon")
    _claim("user", "employer", "acme", namespace="user:bob")
    memory_create(namespace="user:carol", kind="fact", content="No claim.", actor="t")
    response = staff_client.get("/beliefs/", headers=headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert ("<html" in html) is not bool(headers)
    if not headers:
        assert '<form method="get" action="/beliefs/"' in html
        assert 'name="namespace"' in html
    assert 'href="?namespace=user%3Aalice"' in html
    assert 'href="?namespace=user%3Abob"' in html
    assert "user:carol" not in html  # holds no claim


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_namespace_lists_its_claims_each_linked_to_its_timeline(
    staff_client: Client, moves: list[Memory], headers: dict[str, str]
) -> None:
    _claim("user", "employer", "acme")
    _claim("bob", "location", "paris")
    response = staff_client.get("/beliefs/", {"namespace": NS}, headers=headers)
    assert response.status_code == 200
    html = response.content.decode()
    rows = re.findall(r'<tr class="claim-row">(.*?)</tr>', html, re.S)
    cells = [re.findall(r'data-label="([^"]+)">(.*?)</td>', row, re.S) for row in rows]
    assert [[label for label, _ in row] for row in cells] == [
        ["Holder", "Attribute", "Newest value", "Changes", "Last change"]
    ] * 3
    shown = [[re.sub(r"<[^>]+>", "", text).split()[0] for _, text in row[:4]] for row in cells]
    assert shown == [
        ["bob", "location", "paris", "0"],
        ["user", "employer", "acme", "0"],
        ["user", "location", "lille", "2"],  # Lyon, Nantes, then Lille: two changes
    ]
    link = "?namespace=user%3Aalice&amp;subject=user&amp;attribute=location"
    assert f'href="{link}"' in html
    timeline_page = staff_client.get("/beliefs/" + link.replace("&amp;", "&"))
    assert timeline_page.status_code == 200
    assert (
        'href="/beliefs/?namespace=user%3Aalice">its claims</a>' in timeline_page.content.decode()
    )
    one = staff_client.get("/beliefs/", {"namespace": NS, "subject": "bob"}, headers=headers)
    assert one.content.decode().count('<tr class="claim-row">') == 1


def test_the_claims_are_paged_by_keyset_and_read_in_index_order(staff_client: Client) -> None:
    for n in range(timeline.CLAIMS_PAGE + 3):
        _claim("user", f"attr-{n:03d}", f"v{n}")
    seen, after = [], None
    while True:
        page = timeline.claims_of(NS, after=after, size=7)
        seen += [row.claim.attribute for row in page.rows]
        if page.more is None:
            break
        after = page.more
    assert seen == [f"attr-{n:03d}" for n in range(timeline.CLAIMS_PAGE + 3)]
    first = staff_client.get("/beliefs/", {"namespace": NS}).content.decode()
    assert first.count('<tr class="claim-row">') == timeline.CLAIMS_PAGE
    found = re.search(r'<a class="older" rel="next" href="\?([^"]+)"', first)
    assert found is not None
    rest = staff_client.get("/beliefs/?" + found.group(1).replace("&amp;", "&"), headers=HTMX)
    assert rest.content.decode().count('<tr class="claim-row">') == 3
    with CaptureQueriesContext(connection) as captured:
        timeline.claims_of(NS)
    grouped = captured.captured_queries[0]["sql"]
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {grouped}")
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "memory_claim_idx" in plan
        assert "TEMP B-TREE" not in plan  # grouped in the index's order, nothing sorted
