"""`manage.py bootstrap`: admin user, demo token and demo data, idempotent."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from memories.models import Fact, Memory, Message, Thread
from notes.models import Note
from spaceduck.models import ApiToken

pytestmark = pytest.mark.django_db


def bootstrap() -> str:
    out = StringIO()
    call_command("bootstrap", stdout=out)
    return out.getvalue()


def counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Memory, Fact, Thread, Message, Note, ApiToken))


def test_it_creates_admin_token_and_demo_data_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPACEDUCK_ADMIN_PASSWORD", "s3cret-admin-pw")
    first = bootstrap()
    assert "Admin password" not in first  # it was given, so it is not printed
    token_line = next(line for line in first.splitlines() if line.startswith("Demo token"))
    secret = token_line.split(": ", 1)[1]
    after_first = counts()
    assert after_first == (6, 1, 1, 3, 1, 1)

    second = bootstrap()
    assert counts() == after_first
    assert secret not in second

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser
    assert admin.check_password("s3cret-admin-pw")
    response = Client().get(
        "/api/memories", {"namespace": "user:demo"}, headers={"Authorization": f"Bearer {secret}"}
    )
    assert response.status_code == 200
    assert len(response.json()["memories"]) == 6


def test_it_generates_and_prints_an_admin_password_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SPACEDUCK_ADMIN_PASSWORD", raising=False)
    output = bootstrap()
    password = next(
        line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("Admin password")
    )
    assert get_user_model().objects.get(username="admin").check_password(password)


def test_the_demo_user_moving_supersedes_the_demo_location() -> None:
    from memories.extraction.types import Candidate
    from memories.write.dedup import WriteContext, commit_candidate
    from spaceduck.ops.demo import DEMO_NAMESPACE

    bootstrap()
    london = Memory.objects.get(namespace=DEMO_NAMESPACE, slot="location")
    verdict = commit_candidate(
        Candidate(kind="fact", content="The user lives in Tokyo.", slot="location"),
        WriteContext(namespace=DEMO_NAMESPACE, actor="test"),
    )
    assert verdict.extra["superseded"] == [london.pk]
