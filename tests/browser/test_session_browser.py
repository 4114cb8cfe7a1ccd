"""The session ends mid-work (logged out in another tab), in real Chromium: Approve leads
to spaceduck's login page, not a login form swapped into the queue; logging in leads back
to the queue, where the candidate still waits, and the approval then works."""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session

from memories.models import Memory
from memories.write.services import memory_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_approve_after_the_session_ended_logs_in_and_comes_back(staff_page) -> None:  # type: ignore[no-untyped-def]
    page = staff_page
    memory = memory_create(
        namespace="user:alice", kind="fact", content="The user likes tea.", actor="t"
    )
    Memory.objects.filter(pk=memory.pk).update(status="candidate")
    page.goto(page.base + "/review/memories/?namespace=user:alice")
    row = page.locator(f"#candidate-{memory.pk}")
    Session.objects.all().delete()  # logged out in another tab

    row.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/admin/login/**")
    assert page.locator("h1").inner_text() == "Log in to spaceduck"
    assert "Django administration" not in page.content()
    assert Memory.objects.get(pk=memory.pk).status == "candidate"  # nothing was decided

    page.fill("#id_username", "ada")
    page.fill("#id_password", "analytical-engine")
    page.click("input[type=submit]")
    page.wait_for_url("**/review/memories/?namespace=user:alice")
    page.locator(f"#candidate-{memory.pk}").get_by_role("button", name="Approve").click()
    page.wait_for_selector(f"#candidate-{memory.pk}", state="detached")
    assert Memory.objects.get(pk=memory.pk).status == "active"
