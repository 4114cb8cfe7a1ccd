"""Stored text is shown, never run: XSS payloads in every stored field, every dashboard and
admin page opened in real Chromium, nothing executes and the text is shown literally."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memories.models import Extraction, Memory
from memories.write.services import (
    create_thread,
    memory_create,
    memory_delete,
    memory_history_record,
    save_message,
    set_fact,
)
from notes.services import save_note
from spaceduck.core.tokens import token_create
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each would set window.__xss (or open a dialog) if it ran.
SCRIPT = "<script>window.__xss=1</script>"
IMG = '"><img src=x onerror="window.__xss=1">'
SVG = "<svg onload=window.__xss=1></svg>"
LINK = '<a href="javascript:window.__xss=1">click me</a>'
JS_URL = "javascript:window.__xss=1"
BROKEN = "</textarea></title><iframe srcdoc='<script>parent.__xss=1</script>'>"
TEMPLATE = '{{ 7|add:1 }}{% now "Y" %}'
PAYLOADS = [SCRIPT, IMG, SVG, LINK, JS_URL, BROKEN, TEMPLATE]
NS = "user:<img src=x onerror=window.__xss=1>"
# Script elements the browser would run (not JSON data blocks) that carry a payload.
RUNNABLE_PAYLOAD_SCRIPTS = """[...document.scripts].filter(
    s => (s.type === '' || s.type.includes('javascript')) && s.text.includes('__xss')).length"""


@dataclass
class Stored:
    memory: Memory
    candidate: Memory
    superseded: Memory
    gone_id: int
    thread_id: str
    message_id: str
    extraction_id: int
    fact_id: int
    note_id: int
    token_id: int


def store_payloads_everywhere() -> Stored:
    all_of_them = " ".join(PAYLOADS)
    thread = create_thread(NS, title=f"{SCRIPT} {IMG}")
    message = save_message(thread.pk, "user", all_of_them, id=IMG)
    memory = memory_create(namespace=NS, kind="procedure", content=all_of_them, actor=SCRIPT)
    Memory.objects.filter(pk=memory.pk).update(
        title=SVG,
        summary=BROKEN,
        tags=[SCRIPT, JS_URL],
        context=IMG,
        procedure_subtype="constraint",
        scope="project",
        scope_id=LINK,
        source_task_id=SCRIPT,
        source_skill_id=JS_URL,
        source_message=message,
        source_thread=thread,
    )
    memory_history_record(memory=memory, event="edited", actor=IMG, reason=SCRIPT, data={"x": SVG})
    candidate = memory_create(namespace=NS, kind="fact", content=f"maybe {SCRIPT}", actor="t")
    Memory.objects.filter(pk=candidate.pk).update(status="candidate", source_message=message)
    superseded = memory_create(namespace=NS, kind="fact", content=f"old {IMG}", actor="t")
    Memory.objects.filter(pk=superseded.pk).update(status="superseded", superseded_by=memory)
    extraction = Extraction.objects.create(
        message=message,
        thread_id=thread.pk,
        namespace=NS,
        status="done",
        provider=SVG,
        candidates=[
            {
                "candidate": {"content": all_of_them, "stage": SCRIPT},
                "decision": "stored",
                "reason": IMG,
                "memory_id": candidate.pk,
                "matched_memory_id": None,
            }
        ],
        errors=[{"error": SCRIPT}],
    )
    gone = memory_create(namespace=NS, kind="fact", content=f"deleted {SCRIPT}", actor="t")
    gone_id = gone.pk
    memory_delete(memory=gone, actor=IMG, reason=SVG)
    fact = set_fact(NS, SCRIPT, {"html": all_of_them, "list": [IMG]}, provenance={"run_id": SVG})
    save_note(NS, f"old note {IMG}", kind=SVG, id="old-note")
    note = save_note(
        NS,
        all_of_them,
        kind=SCRIPT[:100],
        tags=[IMG],
        author=SVG,
        status="pending",
        supersedes=["old-note"],
        provenance={"source": SCRIPT},
    )
    token = token_create(name=SCRIPT, namespaces=[NS], permissions=["read"])
    return Stored(
        memory=memory,
        candidate=candidate,
        superseded=superseded,
        gone_id=gone_id,
        thread_id=thread.pk,
        message_id=message.pk,
        extraction_id=extraction.pk,
        fact_id=fact.pk,
        note_id=note.pk,
        token_id=token.token.pk,
    )


def pages_to_visit(s: Stored) -> dict[str, str | None]:
    """Every page that shows stored text -> a payload it must show literally (None: any)."""
    from urllib.parse import quote, urlencode

    def admin(path: str) -> str:
        return f"/admin/{path}"

    def q(**params: str) -> str:
        return "/?" + urlencode(params)

    return {
        "/": SCRIPT,
        q(namespace=NS): SCRIPT,
        q(namespace=NS, q="window xss script", project=LINK): SCRIPT,
        q(namespace=NS, task_id=SCRIPT): SCRIPT,
        q(namespace=NS, kind=SCRIPT): None,  # a bad filter value echoed in the error
        f"/memories/{s.memory.pk}/": BROKEN,
        f"/memories/{s.superseded.pk}/": IMG,
        f"/memories/{s.candidate.pk}/": SCRIPT,
        f"/memories/{s.memory.pk}/delete/": SCRIPT,
        # A deleted memory's page shows its tombstone (who deleted it), never what it said.
        f"/memories/{s.gone_id}/": IMG,
        "/review/memories/": SCRIPT,
        "/notes/review/": SCRIPT,
        admin(""): None,
        admin("memories/memory/"): SCRIPT,
        admin("memories/memory/?" + urlencode({"q": "window"})): SCRIPT,
        admin(f"memories/memory/{s.memory.pk}/change/"): SCRIPT,
        admin("memories/memoryevent/"): IMG,
        admin("memories/fact/"): SCRIPT,
        admin(f"memories/fact/{s.fact_id}/change/"): SCRIPT,
        admin("memories/thread/"): SCRIPT,
        admin(f"memories/thread/{quote(s.thread_id)}/change/"): SCRIPT,
        admin("memories/message/"): None,
        admin(f"memories/message/{quote(s.message_id, safe='')}/change/"): SCRIPT,
        admin("memories/extraction/"): None,
        admin(f"memories/extraction/{s.extraction_id}/change/"): None,
        admin("notes/note/"): None,
        admin(f"notes/note/{s.note_id}/change/"): SCRIPT,
        admin("notes/notesupersession/"): None,
        admin("spaceduck/apitoken/"): SCRIPT,
        admin(f"spaceduck/apitoken/{s.token_id}/change/"): SCRIPT,
    }


def test_no_stored_payload_runs_on_any_page(page, live_server, django_user_model) -> None:  # type: ignore[no-untyped-def]
    stored = store_payloads_everywhere()
    user = django_user_model.objects.create_superuser("ada", password="analytical-engine")
    log_in(page.context, live_server.url, user)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path, literal in pages_to_visit(stored).items():
        response = page.goto(live_server.url + path)
        assert response is not None
        assert response.status in (200, 400, 404), (path, response.status)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__xss") is None, path
        assert dialogs == [], path
        assert page.locator("a[href^='javascript:' i]").count() == 0, path
        assert page.evaluate(RUNNABLE_PAYLOAD_SCRIPTS) == 0, path
        text = page.inner_text("body")
        if literal is not None:
            assert literal in text, (path, literal)
    # Open every details panel of the memory page: hidden text must be inert too.
    page.goto(f"{live_server.url}/memories/{stored.memory.pk}/")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate("window.__xss") is None
    assert TEMPLATE in page.inner_text("body")  # template syntax is text, not evaluated
