"""The memory viewer's filters, keyset pages, counts and recall box (test client, with and
without htmx)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memories.models import Memory
from memories.store.positions import Position
from memories.store.selectors import MemoryFilter, memory_count, memory_page
from memories.write.services import memory_create

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def make(content: str, **fields: object) -> Memory:
    memory = memory_create(
        namespace=str(fields.pop("namespace", "user:alice")),
        kind=str(fields.pop("kind", "fact")),
        content=content,
        actor="t",
    )
    if fields:
        Memory.objects.filter(pk=memory.pk).update(**fields)
        memory.refresh_from_db()
    return memory


def listed(html: str) -> list[str]:
    return re.findall(r'<div class="content">([^<]*)</div>', html)


def test_every_filter_narrows_the_list_and_they_combine(staff_client: Client) -> None:
    make("Plain fact.")
    make("Other namespace.", namespace="user:bob")
    make("An episode.", kind="episode")
    make("A candidate.", status="candidate")
    make("Thread scoped.", scope="thread", scope_id="t1")
    make("From a tool.", source_type="tool_result")
    make("Written by a task.", source_task_id="nightly")
    make("Written by a skill.", source_skill_id="calendar")
    make("A constraint.", kind="procedure", procedure_subtype="constraint")
    make("Task and episode.", kind="episode", source_task_id="nightly")
    cases = {
        "namespace=user:bob": ["Other namespace."],
        "kind=episode": ["Task and episode.", "An episode."],
        "status=candidate": ["A candidate."],
        "scope=thread": ["Thread scoped."],
        "source_type=tool_result": ["From a tool."],
        "task_id=nightly": ["Task and episode.", "Written by a task."],
        "skill_id=calendar": ["Written by a skill."],
        "procedure_subtype=constraint": ["A constraint."],
        "task_id=nightly&kind=episode": ["Task and episode."],
        "task_id=nightly&kind=fact&namespace=user:alice": ["Written by a task."],
    }
    for query, expected in cases.items():
        html = staff_client.get(f"/?{query}", headers=HTMX).content.decode()
        assert listed(html) == expected, query


def test_filters_stay_in_the_url_and_the_form_shows_them(staff_client: Client) -> None:
    make("A candidate.", status="candidate", kind="episode")
    page = staff_client.get("/", {"status": "candidate", "kind": "episode"}).content.decode()
    assert '<option value="candidate" selected>' in page
    assert '<option value="episode" selected>' in page
    assert 'hx-push-url="true"' in page  # htmx swaps keep the address bar shareable


def test_htmx_gets_only_the_list_and_the_page_gets_everything(staff_client: Client) -> None:
    make("Alice likes tea.")
    fragment = staff_client.get("/", headers=HTMX).content.decode()
    assert fragment.strip().startswith('<section id="memory-list">')
    assert "<html" not in fragment
    page = staff_client.get("/").content.decode()
    assert "<html" in page
    assert 'id="filters"' in page


def test_each_row_shows_what_a_reviewer_needs_and_links_its_page(staff_client: Client) -> None:
    memory = make(
        "Deploys need a review.",
        kind="procedure",
        procedure_subtype="constraint",
        title="Deploy rule",
        scope="project",
        scope_id="apollo",
        source_task_id="audit-7",
        source_skill_id="ops",
        confidence=0.65,
        source_type="tool_result",
    )
    html = staff_client.get("/", headers=HTMX).content.decode()
    row = html[html.index(f'id="memory-{memory.pk}"') :]
    row = row[: row.index("</tr>")]
    for text in (
        "procedure",
        "constraint",
        "Deploy rule",
        "Deploys need a review.",
        "user:alice",
        "project",
        "apollo",
        "Tool Result",
        "task audit-7",
        "skill ops",
        "0.65",
        f'href="/memories/{memory.pk}/"',
    ):
        assert text in row, text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=bogus", "status"),
        ("kind=memo", "kind"),
        ("namespace=nokind", "namespace"),
        ("namespace=user:a:b", "namespace"),
        ("after=not-a-cursor", "after"),
        ("before=99999999999999999999999999-1", "before"),
        ("task_id=" + "x" * 300, "task_id"),
        ("scope=%00", "scope"),
    ],
)
def test_bad_filter_values_get_a_clear_message_not_a_500(
    staff_client: Client, query: str, field: str
) -> None:
    for headers in ({}, HTMX):
        response = staff_client.get(f"/?{query}", headers=headers)
        assert response.status_code == 400
        html = response.content.decode()
        assert "These filters cannot be used" in html
        assert f"<code>{field}</code>" in html


def test_pages_follow_each_other_without_gaps_or_repeats(staff_client: Client) -> None:
    now = timezone.now()
    made = [make(f"Memory number {i}.") for i in range(120)]
    # Equal timestamps in runs of three: the id breaks the ties.
    for i, memory in enumerate(made):
        Memory.objects.filter(pk=memory.pk).update(updated_at=now - timedelta(seconds=i // 3))
    seen: list[str] = []
    url = "/?namespace=user:alice"
    pages = 0
    while url:
        html = staff_client.get(url, headers=HTMX).content.decode()
        seen += listed(html)
        pages += 1
        older = re.search(r'class="older" rel="next" href="\?([^"]+)"', html)
        url = "/?" + older.group(1).replace("&amp;", "&") if older else ""
    assert pages == 3
    # Newest first; among equal times, the higher id first.
    order = sorted(range(120), key=lambda i: (i // 3, -i))
    assert seen == [f"Memory number {i}." for i in order]


def test_the_newer_link_goes_back_to_the_previous_page(staff_client: Client) -> None:
    for i in range(60):
        make(f"Note {i:02d}.")
    first = staff_client.get("/", headers=HTMX).content.decode()
    older = re.search(r'class="older" rel="next" href="\?([^"]+)"', first)
    assert older is not None
    second = staff_client.get("/?" + older.group(1).replace("&amp;", "&"), headers=HTMX)
    newer = re.search(r'class="newer" rel="prev" href="\?([^"]+)"', second.content.decode())
    assert newer is not None
    back = staff_client.get("/?" + newer.group(1).replace("&amp;", "&"), headers=HTMX)
    assert listed(back.content.decode()) == listed(first)
    assert 'class="newer"' not in back.content.decode()  # the first page has no newer page


def test_the_list_says_how_many_match_and_caps_the_count(staff_client: Client) -> None:
    for i in range(7):
        make(f"Fact {i}.", kind="episode" if i < 3 else "fact")
    html = staff_client.get("/", {"kind": "episode"}, headers=HTMX).content.decode()
    assert "3 memories match." in html
    assert memory_count(filters=MemoryFilter(), cap=5) == (5, True)
    assert memory_count(filters=MemoryFilter(kind="episode"), cap=5) == (3, False)


def test_a_cursor_round_trips_and_pages_by_keyset() -> None:
    now = timezone.now()
    cursor = Position(now, 42)
    assert Position.decode(cursor.encode()) == cursor
    a, b, c = (make(f"Row {i}.") for i in range(3))
    page = memory_page(filters=MemoryFilter(), size=2)
    assert [m.pk for m in page.memories] == [c.pk, b.pk]
    assert page.newer is None
    assert page.older is not None
    rest = memory_page(filters=MemoryFilter(), after=page.older, size=2)
    assert [m.pk for m in rest.memories] == [a.pk]
    assert rest.older is None


# --- the recall box ------------------------------------------------------------------


def test_recall_finds_thread_and_project_memories_only_when_asked(staff_client: Client) -> None:
    make("The banjo lesson is at noon.", scope="thread", scope_id="t-42")
    make("The banjo repair shop is on Main Street.", scope="project", scope_id="p-7")
    plain = staff_client.get(
        "/", {"namespace": "user:alice", "q": "banjo"}, headers=HTMX
    ).content.decode()
    assert "banjo lesson" not in plain
    assert "repair shop" not in plain
    scoped = staff_client.get(
        "/",
        {"namespace": "user:alice", "q": "banjo", "thread": "t-42", "project": "p-7"},
        headers=HTMX,
    ).content.decode()
    assert "The banjo lesson is at noon." in scoped
    assert "The banjo repair shop is on Main Street." in scoped


def test_hits_with_only_a_weak_vector_neighbour_are_shown_apart(staff_client: Client) -> None:
    make("Alice plays the oboe.")
    make("Quarterly tax forms are due in April.")
    html = staff_client.get(
        "/", {"namespace": "user:alice", "q": "oboe"}, headers=HTMX
    ).content.decode()
    strong, _, weak = html.partition('class="weak-matches"')
    assert "Alice plays the oboe." in strong
    assert "Quarterly tax forms" not in strong
    assert "Quarterly tax forms are due in April." in weak
    assert "weak match" in weak


def test_each_hit_has_a_why_panel_with_every_factor(staff_client: Client) -> None:
    make("Alice plays the oboe.")
    html = staff_client.get("/", {"namespace": "user:alice", "q": "oboe"}).content.decode()
    why = html[html.index('<details class="why">') :]
    why = why[: why.index("</details>")]
    for label in ("vector", "keyword", "RRF", "importance", "confidence", "recency", "scope"):
        times = f"<th>\N{MULTIPLICATION SIGN} {label}</th>"
        assert f"<th>{label}</th>" in why or times in why, label
    assert "= score" in why


def test_recall_honours_the_kind_filter(staff_client: Client) -> None:
    make("The oboe recital was on Friday.", kind="episode")
    make("Alice plays the oboe.")
    html = staff_client.get(
        "/", {"namespace": "user:alice", "q": "oboe", "kind": "episode"}, headers=HTMX
    ).content.decode()
    assert "The oboe recital was on Friday." in html
    assert "Alice plays the oboe." not in html


def tag_of(html: str, element_id: str) -> str:
    match = re.search(rf'<(?:input|form)\b[^>]*\bid="{element_id}"[^>]*>', html)
    assert match is not None, element_id
    return match.group(0)


def test_the_recall_box_searches_as_one_types(staff_client: Client) -> None:
    """Debounced htmx on the box itself, with the other filters; a plain GET form under it."""
    page = staff_client.get("/").content.decode()
    box = tag_of(page, "q")
    assert 'hx-trigger="input changed delay:300ms, search"' in box
    assert 'hx-get="/"' in box
    assert 'hx-include="#filters"' in box
    assert 'hx-target="#memory-list"' in box
    assert 'hx-push-url="true"' in box
    form = tag_of(page, "filters")
    assert 'method="get"' in form
    assert 'action="/"' in form


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_typing_in_the_box_recalls_with_the_apis_search(
    owner, staff_client: Client, htmx: bool
) -> None:  # type: ignore[no-untyped-def]
    make("Alice plays the oboe.")
    make("Alice keeps bees.")
    make("Bob plays the oboe too.", namespace="user:bob")
    answer = staff_client.get(
        "/", {"namespace": "user:alice", "q": "oboe"}, headers=HTMX if htmx else {}
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert ("<html" in html) is not htmx  # htmx: only the list
    assert "Alice plays the oboe." in html
    assert "Bob plays the oboe too." not in html  # one namespace
    hits = re.findall(r'class="hit[^"]*">.*?<div class="content">([^<]*)</div>', html, re.DOTALL)
    api = owner.get("/api/memories/search", {"namespace": "user:alice", "q": "oboe"}).json()
    assert hits == [hit["memory"]["content"] for hit in api["memories"]]


def test_the_viewer_remembers_the_namespace(staff_client: Client) -> None:
    make("Alice likes tea.")
    make("Bob likes coffee.", namespace="user:bob")
    # Chosen with htmx (typing a search), then the viewer opened again from the navigation.
    staff_client.get("/", {"namespace": "user:bob", "q": "coffee"}, headers=HTMX)
    page = staff_client.get("/").content.decode()
    assert 'value="user:bob"' in tag_of(page, "namespace")
    assert listed(page) == ["Bob likes coffee."]
    # A query string is taken as it is: a shared link shows what it says.
    shared = staff_client.get("/", {"kind": "fact"}).content.decode()
    assert set(listed(shared)) == {"Alice likes tea.", "Bob likes coffee."}
    # Chosen with a plain GET.
    staff_client.get("/", {"namespace": "user:alice"})
    assert listed(staff_client.get("/").content.decode()) == ["Alice likes tea."]
    # A bad one is refused and not kept.
    assert staff_client.get("/", {"namespace": "no spaces"}).status_code == 400
    assert listed(staff_client.get("/").content.decode()) == ["Alice likes tea."]
    # "namespace=" (the Clear link) is every namespace, and forgets it.
    page = staff_client.get("/").content.decode()
    assert 'href="/?namespace="' in page
    assert set(listed(staff_client.get("/", {"namespace": ""}).content.decode())) == {
        "Alice likes tea.",
        "Bob likes coffee.",
    }
    assert len(listed(staff_client.get("/").content.decode())) == 2


def test_another_person_does_not_get_my_namespace(
    staff_client: Client,
    django_user_model,  # type: ignore[no-untyped-def]
) -> None:
    make("Alice likes tea.")
    make("Bob likes coffee.", namespace="user:bob")
    staff_client.get("/", {"namespace": "user:bob"})
    other = Client()
    other.force_login(django_user_model.objects.create_user("other", is_staff=True))
    assert len(listed(other.get("/").content.decode())) == 2


def test_the_viewer_answers_get_only(staff_client: Client) -> None:
    assert staff_client.post("/").status_code == 405


def test_the_namespace_choices_list_each_namespace_once_in_order_up_to_a_limit(
    staff_client: Client,
) -> None:
    from memories.store.selectors import memory_namespaces

    for name in ("user:carol", "agent:bot", "user:alice", "user:carol", "global:all"):
        make("Something.", namespace=name)
    assert memory_namespaces() == ["agent:bot", "global:all", "user:alice", "user:carol"]
    assert memory_namespaces(limit=2) == ["agent:bot", "global:all"]
    page = staff_client.get("/").content.decode()
    assert '<datalist id="namespace-choices"><option value="agent:bot">' in page
