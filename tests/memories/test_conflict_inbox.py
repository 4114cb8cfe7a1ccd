"""The conflict inbox through the HTTP API (memories.write.conflicts, opened by
memories.write.dedup): when the engine is unsure, the new statement waits as a candidate
beside the old memory, and a person (a token with `approve`) replaces, keeps both, or
edits them into one."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Conflict, Memory
from tests.conftest import Actor, make_actor
from tests.memories.test_beliefs_api import NS, contents, say

pytestmark = pytest.mark.django_db
TEA, COFFEE = "I prefer tea over coffee.", "I prefer coffee over tea."


@pytest.fixture
def reviewer(db: None) -> Actor:
    return make_actor([NS], ["read", "approve"], name="reviewer")


def flip(owner: Actor) -> dict[str, Any]:
    """Tea said twice (confirmed), then coffee without a word that it changed: unsure."""
    say(owner, [TEA], [TEA], [COFFEE])
    listed = owner.get("/api/conflicts", {"namespace": NS})
    assert listed.status_code == 200, listed.content
    [conflict] = listed.json()["conflicts"]
    return conflict


def resolve(actor: Actor, conflict_id: int, **body: Any):  # type: ignore[no-untyped-def]
    return actor.post(f"/api/conflicts/{conflict_id}/resolve", body)


def test_an_unsure_flip_waits_as_a_pair_and_changes_nothing(owner: Actor) -> None:
    conflict = flip(owner)
    assert conflict["old"]["content"] == "The user prefers tea over coffee."
    assert conflict["old"]["status"] == "active"
    assert conflict["new"]["content"] == "The user prefers coffee over tea."
    assert conflict["new"]["status"] == "candidate"
    assert conflict["status"] == "open"
    assert conflict["resolution"] == ""
    assert "said again" in conflict["reason"]
    assert contents(owner) == ["The user prefers tea over coffee."]


def test_a_flip_that_says_it_changed_replaces_without_asking(owner: Actor) -> None:
    say(owner, [TEA], [TEA], ["Actually, I prefer coffee over tea now."])
    assert owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"] == []
    assert contents(owner) == ["The user prefers coffee over tea now."]


def test_replace_leaves_only_the_new_one_and_recall_finds_only_it(
    owner: Actor, reviewer: Actor
) -> None:
    conflict = flip(owner)
    answer = resolve(reviewer, conflict["id"], decision="replace")
    assert answer.status_code == 200, answer.content
    assert answer.json()["resolution"] == "replace"
    assert answer.json()["resolved_by"] == "token:reviewer"
    assert contents(owner) == ["The user prefers coffee over tea."]
    old = Memory.objects.get(pk=conflict["old"]["id"])
    assert old.status == "superseded"
    assert old.superseded_by_id == conflict["new"]["id"]
    found = owner.get("/api/memories/search", {"namespace": NS, "q": "tea or coffee?"})
    assert [hit["memory"]["id"] for hit in found.json()["memories"]] == [conflict["new"]["id"]]
    assert owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"] == []


def test_keep_both_makes_the_new_one_active_beside_the_old(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    assert resolve(reviewer, conflict["id"], decision="keep_both").status_code == 200
    assert contents(owner) == [
        "The user prefers coffee over tea.",
        "The user prefers tea over coffee.",
    ]


def test_edit_into_one_keeps_the_persons_text(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    merged = "The user drinks tea in the morning and prefers coffee over tea after lunch."
    answer = resolve(reviewer, conflict["id"], decision="merge", content=merged)
    assert answer.status_code == 200, answer.content
    assert contents(owner) == [merged]
    assert answer.json()["new"]["content"] == merged


def test_deciding_needs_the_approve_permission(owner: Actor) -> None:
    conflict = flip(owner)
    answer = resolve(owner, conflict["id"], decision="replace")
    assert answer.status_code == 403
    assert "approve" in answer.json()["detail"]
    assert contents(owner) == ["The user prefers tea over coffee."]


def test_another_namespace_sees_no_conflict(owner: Actor, stranger: Actor) -> None:
    conflict = flip(owner)
    assert stranger.get("/api/conflicts", {"namespace": NS}).status_code == 404
    assert resolve(stranger, conflict["id"], decision="replace").status_code == 404
    assert resolve(stranger, 999999, decision="replace").status_code == 404


def test_bad_decisions_are_refused_with_a_message(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    assert resolve(reviewer, conflict["id"], decision="maybe").status_code == 422
    no_text = resolve(reviewer, conflict["id"], decision="merge")
    assert no_text.status_code == 422
    assert "content" in no_text.json()["detail"]
    text_without_merge = resolve(reviewer, conflict["id"], decision="replace", content="x")
    assert text_without_merge.status_code == 422
    too_long = resolve(reviewer, conflict["id"], decision="merge", content="x" * 5000)
    assert too_long.status_code == 422
    assert contents(owner) == ["The user prefers tea over coffee."]


def test_a_conflict_is_decided_once(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    assert resolve(reviewer, conflict["id"], decision="replace").status_code == 200
    again = resolve(reviewer, conflict["id"], decision="keep_both")
    assert again.status_code == 409
    assert "decided already" in again.json()["detail"]
    assert contents(owner) == ["The user prefers coffee over tea."]


def test_a_pair_settled_in_the_candidate_queue_leaves_the_inbox(
    owner: Actor, reviewer: Actor
) -> None:
    conflict = flip(owner)
    rejected = reviewer.patch(f"/api/memories/{conflict['new']['id']}", {"status": "archived"})
    assert rejected.status_code == 403  # archiving is a write; the reviewer only approves
    archived = owner.patch(f"/api/memories/{conflict['new']['id']}", {"status": "archived"})
    assert archived.status_code == 200
    assert owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"] == []
    late = resolve(reviewer, conflict["id"], decision="replace")
    assert late.status_code == 409
    assert "settled elsewhere" in late.json()["detail"]
    assert Conflict.objects.get(pk=conflict["id"]).resolution == "settled"


def test_approving_the_candidate_through_the_api_replaces_the_old_one(
    owner: Actor, reviewer: Actor
) -> None:
    conflict = flip(owner)
    new_id = conflict["new"]["id"]
    # The agent itself cannot: approving is the human gate, and so is the conflict.
    refused = owner.patch(f"/api/memories/{new_id}", {"status": "active"})
    assert refused.status_code == 403
    assert len(owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]) == 1
    approved = reviewer.patch(f"/api/memories/{new_id}", {"status": "active"})
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == "active"
    # The person said the new one is right: the pair is decided as replace, by them.
    assert owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"] == []
    decided = Conflict.objects.get(pk=conflict["id"])
    assert (decided.status, decided.resolution) == ("resolved", "replace")
    assert decided.resolved_by == "token:reviewer"
    old = Memory.objects.get(pk=conflict["old"]["id"])
    assert (old.status, old.superseded_by_id) == ("superseded", new_id)
    assert contents(owner) == ["The user prefers coffee over tea."]


def test_an_edit_that_contradicts_another_memory_opens_a_conflict(owner: Actor) -> None:
    say(owner, ["I live in Berlin."], ["I love jazz."])
    jazz = next(
        m
        for m in owner.get("/api/memories", {"namespace": NS}).json()["memories"]
        if "jazz" in m["content"]
    )
    edited = owner.patch(f"/api/memories/{jazz['id']}", {"content": "The user lives in Munich."})
    assert edited.status_code == 200
    assert edited.json()["claim"]["attribute"] == "location"
    [conflict] = owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]
    assert conflict["old"]["content"] == "The user lives in Berlin."
    assert conflict["new"]["id"] == jazz["id"]
    assert "both live" in conflict["reason"]
    # Asked once: another edit of the same pair does not ask again.
    owner.patch(f"/api/memories/{jazz['id']}", {"content": "The user lives in Munich, Germany."})
    assert len(owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]) == 1


# --- The dashboard: /review/conflicts/ (plain forms; htmx swaps the inbox) ---------------


def test_the_inbox_shows_the_pair_side_by_side_with_its_sources(owner: Actor, staff_client) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    page = staff_client.get("/review/conflicts/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'id="conflict-{conflict["id"]}"' in html
    assert "The user prefers tea over coffee." in html
    assert "The user prefers coffee over tea." in html
    assert "I prefer coffee over tea." in html  # the message it came from
    assert 'id="conflicts-nav"' in html
    assert '<span class="count">1</span>' in html


def test_replace_from_the_dashboard_without_javascript(owner: Actor, staff_client) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    answer = staff_client.post("/review/conflicts/", {"row": f"replace:{conflict['id']}"})
    assert answer.status_code == 302
    assert contents(owner) == ["The user prefers coffee over tea."]
    assert Conflict.objects.get(pk=conflict["id"]).resolved_by == "staff:staff"
    after = staff_client.get(answer["Location"]).content.decode()
    assert "replaced" in after
    assert "No conflict is waiting" in after


def test_edit_into_one_from_the_dashboard(owner: Actor, staff_client) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    merged = "The user prefers coffee over tea, except in the evening."
    staff_client.post(
        "/review/conflicts/",
        {"row": f"merge:{conflict['id']}", f"content-{conflict['id']}": merged},
    )
    assert contents(owner) == [merged]


MERGED = "The user drinks tea in the morning and prefers coffee over tea after lunch."
MERGED_TITLE = "The user drinks tea in the morning and prefers coffee..."  # made from MERGED


def new_side(conflict: dict[str, Any]) -> Memory:
    return Memory.objects.get(pk=conflict["new"]["id"])


def test_edit_into_one_titles_the_memory_from_the_merged_text(
    owner: Actor, reviewer: Actor
) -> None:
    conflict = flip(owner)
    before = new_side(conflict).title
    assert before  # the candidate's title, made from the text it replaced
    answer = resolve(reviewer, conflict["id"], decision="merge", content=MERGED)
    assert answer.status_code == 200, answer.content
    assert answer.json()["new"]["title"] == MERGED_TITLE != before
    assert new_side(conflict).title == MERGED_TITLE


def test_edit_into_one_takes_the_persons_title(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    answer = resolve(
        reviewer, conflict["id"], decision="merge", content=MERGED, title="Tea, then coffee"
    )
    assert answer.status_code == 200, answer.content
    assert new_side(conflict).title == "Tea, then coffee"


def test_a_title_is_only_for_merge_and_has_the_title_limit(owner: Actor, reviewer: Actor) -> None:
    conflict = flip(owner)
    refused = resolve(reviewer, conflict["id"], decision="replace", title="Tea")
    assert refused.status_code == 422
    assert "only for merge" in refused.json()["detail"]
    too_long = resolve(reviewer, conflict["id"], decision="merge", content=MERGED, title="t" * 201)
    assert too_long.status_code == 422
    assert "title should have at most 200 characters" in too_long.json()["detail"]
    assert contents(owner) == ["The user prefers tea over coffee."]


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
@pytest.mark.parametrize("title", ["", "Coffee after lunch"], ids=["made", "given"])
def test_edit_into_one_from_the_dashboard_sets_the_title(
    owner: Actor, staff_client, htmx: bool, title: str
) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    page = staff_client.get("/review/conflicts/").content.decode()
    assert f'name="title-{conflict["id"]}"' in page  # the form asks for it
    answer = staff_client.post(
        "/review/conflicts/",
        {
            "row": f"merge:{conflict['id']}",
            f"content-{conflict['id']}": MERGED,
            f"title-{conflict['id']}": title,
        },
        headers={"HX-Request": "true"} if htmx else {},
    )
    assert answer.status_code == (200 if htmx else 302)
    assert new_side(conflict).title == (title or MERGED_TITLE)
    assert contents(owner) == [MERGED]


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
@pytest.mark.parametrize(
    ("content", "title", "said"),
    [
        ("x" * 1001, "Mine", "content should have at most 1,000 characters"),
        (MERGED, "t" * 201, "title should have at most 200 characters"),
    ],
    ids=["long-text", "long-title"],
)
def test_a_refused_merge_keeps_the_reviewers_text_and_says_why_beside_it(
    owner: Actor, staff_client, htmx: bool, content: str, title: str, said: str
) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    pk = conflict["id"]
    answer = staff_client.post(
        "/review/conflicts/",
        {"row": f"merge:{pk}", f"content-{pk}": content, f"title-{pk}": title},
        headers={"HX-Request": "true"} if htmx else {},
    )
    assert answer.status_code == 422
    html = answer.content.decode()
    if htmx:  # only this pair's card, put back in place of itself
        assert html.lstrip().startswith(f'<article class="conflict" id="conflict-{pk}"')
        assert (answer["HX-Retarget"], answer["HX-Reswap"]) == (f"#conflict-{pk}", "outerHTML")
        assert 'hx-swap-oob="innerHTML"' in html  # the flash says it too
    card = html[html.index(f'id="conflict-{pk}"') :]
    card = card[: card.index("</article>")]
    # The reviewer's own text and title, the refusal (with the count) beside the form.
    assert f">{content}</textarea>" in card
    assert f'value="{title}"' in card
    assert 'aria-invalid="true"' in card
    refusal = card[card.index(f'id="merge-refusal-{pk}"') :]
    assert said in refusal
    assert "not 1,001" in refusal or "not 201" in refusal
    flash = html[html.index('id="flash"') :]
    assert said in flash[: flash.index("</div>")]
    assert contents(owner) == ["The user prefers tea over coffee."]


def test_bulk_keep_both_with_htmx_swaps_only_the_inbox(owner: Actor, staff_client) -> None:  # type: ignore[no-untyped-def]
    first = flip(owner)
    say(
        owner,
        ["I prefer window seats over aisle seats."],
        ["I prefer window seats over aisle seats."],
    )
    say(owner, ["I prefer aisle seats over window seats."])
    pairs = owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]
    assert len(pairs) == 2
    answer = staff_client.post(
        "/review/conflicts/",
        {"decision": "keep_both", "ids": [p["id"] for p in pairs]},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert html.lstrip().startswith('<section id="inbox" data-queue="conflicts">')
    assert "2 conflicts: kept both." in html
    assert "No conflict is waiting" in html
    assert len(contents(owner)) == 4
    assert Conflict.objects.get(pk=first["id"]).resolution == "keep_both"


def test_a_decision_without_a_choice_keeps_the_inbox_and_says_why(
    owner: Actor, staff_client
) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    answer = staff_client.post(
        "/review/conflicts/", {"decision": "replace"}, headers={"HX-Request": "true"}
    )
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "tick at least one conflict" in html
    assert f'id="conflict-{conflict["id"]}"' in html  # the inbox is still there
    merge_empty = staff_client.post(
        "/review/conflicts/",
        {"row": f"merge:{conflict['id']}", f"content-{conflict['id']}": " "},
        headers={"HX-Request": "true"},
    )
    assert merge_empty.status_code == 422
    assert "merge needs the content" in merge_empty.content.decode()
    assert contents(owner) == ["The user prefers tea over coffee."]


def test_a_bad_namespace_filter_is_a_400_with_the_reason(staff_client) -> None:  # type: ignore[no-untyped-def]
    answer = staff_client.get("/review/conflicts/", {"namespace": "no spaces allowed"})
    assert answer.status_code == 400
    assert "namespace" in answer.content.decode()


# --- The admin: the same decisions ----------------------------------------------------------


def test_the_admin_decides_a_conflict_on_its_page(owner: Actor, admin_client) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    url = f"/admin/memories/conflict/{conflict['id']}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200
    assert "The user prefers coffee over tea." in page.content.decode()
    refused = admin_client.post(url, {"decision": "merge", "content": ""})
    assert refused.status_code == 200  # the form again, with the error beside the field
    assert "merge needs the text" in refused.content.decode()
    assert 'name="title"' in page.content.decode()
    refused = admin_client.post(url, {"decision": "keep_both", "title": "Both"})
    assert "the title is for merge" in refused.content.decode()
    merged = "The user likes both tea and coffee, coffee a little more."
    saved = admin_client.post(url, {"decision": "merge", "content": merged, "title": "Both"})
    assert saved.status_code == 302
    assert contents(owner) == [merged]
    assert Memory.objects.get(pk=conflict["new"]["id"]).title == "Both"
    assert Conflict.objects.get(pk=conflict["id"]).resolution == "merge"


def test_the_admin_replaces_in_bulk(owner: Actor, admin_client) -> None:  # type: ignore[no-untyped-def]
    conflict = flip(owner)
    answer = admin_client.post(
        "/admin/memories/conflict/",
        {"action": "replace", "_selected_action": [conflict["id"]]},
        follow=True,
    )
    assert answer.status_code == 200
    assert f"replace: conflict {conflict['id']}." in answer.content.decode().lower()
    assert contents(owner) == ["The user prefers coffee over tea."]
    assert admin_client.get("/admin/memories/conflict/add/").status_code == 403


def test_a_hedged_new_value_does_not_retire_the_old_one_on_its_own(owner: Actor) -> None:
    say(owner, ["I live in Berlin."])
    body = {
        "namespace": NS,
        "kind": "fact",
        "content": "The user lives in Rome.",
        "confidence": "likely",
    }
    written = owner.post("/api/memories", body)
    assert written.status_code == 201
    assert written.json()["memory"]["status"] == "candidate"
    # Without the rule Berlin was superseded by a candidate: agents were given no home at all.
    assert contents(owner) == ["The user lives in Berlin."]
    [conflict] = owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]
    assert "hedged" in conflict["reason"]


def test_a_statement_that_may_be_sarcasm_waits_beside_what_it_would_replace(
    owner: Actor,
) -> None:
    say(owner, ["I hate Mondays."], ["I just LOVE Mondays."])
    assert contents(owner) == ["The user hates Mondays."]
    [conflict] = owner.get("/api/conflicts", {"namespace": NS}).json()["conflicts"]
    assert conflict["new"]["status"] == "candidate"
    assert "may be sarcasm" in conflict["reason"]


def test_a_claim_closed_by_a_laugh_is_never_active_on_its_own(owner: Actor) -> None:
    say(owner, ["I'm the CEO of Google lol"])
    assert contents(owner) == []
    waiting = owner.get("/api/memories", {"namespace": NS, "status": "candidate"}).json()
    assert [m["content"] for m in waiting["memories"]] == ["The user works as the CEO."]
