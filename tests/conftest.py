"""Shared fixtures. The test environment itself is fixed in tests/settings.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.fakes.openai_server import FakeOpenAI

if TYPE_CHECKING:
    from django.db.migrations.executor import MigrationExecutor


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A local OpenAI-compatible server, fresh for each test."""
    # A developer's HTTP(S)_PROXY must not swallow requests meant for 127.0.0.1.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with FakeOpenAI() as server:
        yield server


# --- Actors -------------------------------------------------------------------
from dataclasses import dataclass  # noqa: E402

from django.test import Client  # noqa: E402

from memories.store import keyword_index  # noqa: E402
from spaceduck.core import runtime  # noqa: E402
from spaceduck.core.providers import reset_providers  # noqa: E402
from spaceduck.core.tokens import token_create  # noqa: E402


@dataclass
class Actor:
    """An API caller: a token secret and a client that sends it."""

    secret: str
    client: Client

    def get(self, path: str, data: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.get(
            path, data, headers=self._auth(kwargs.pop("headers", None)), **kwargs
        )

    def post(self, path: str, data: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.post(
            path,
            data,
            content_type="application/json",
            headers=self._auth(kwargs.pop("headers", None)),
            **kwargs,
        )

    def put(self, path: str, data: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.put(
            path,
            data,
            content_type="application/json",
            headers=self._auth(kwargs.pop("headers", None)),
            **kwargs,
        )

    def patch(self, path: str, data: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.patch(
            path,
            data,
            content_type="application/json",
            headers=self._auth(kwargs.pop("headers", None)),
            **kwargs,
        )

    def delete(self, path: str, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.client.delete(path, headers=self._auth(kwargs.pop("headers", None)), **kwargs)

    def _auth(self, extra: object = None) -> dict[str, str]:
        return {**(extra or {}), "Authorization": f"Bearer {self.secret}"}  # type: ignore[dict-item]


def make_actor(namespaces: list[str], permissions: list[str], name: str = "actor") -> Actor:
    created = token_create(name=name, namespaces=namespaces, permissions=permissions)
    return Actor(secret=created.secret, client=Client())


@pytest.fixture
def owner(db: None) -> Actor:
    """Alice's agent: reads and writes user:alice."""
    return make_actor(["user:alice"], ["read", "write"], name="owner")


@pytest.fixture
def stranger(db: None) -> Actor:
    """Bob's agent: has no grant on user:alice."""
    return make_actor(["user:bob"], ["read", "write"], name="stranger")


@pytest.fixture
def staff_client(db: None, django_user_model) -> Client:  # type: ignore[no-untyped-def]
    user = django_user_model.objects.create_user("staff", password="pw-staff-123", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def _fresh_providers() -> Iterator[None]:
    """Providers are cached per process; tests that change settings get fresh ones."""
    reset_providers()
    keyword_index.forget_common()  # per-process, keyed by database name, like the test DB
    runtime.forget_cached()  # a saved setting of an earlier test was rolled back
    yield
    reset_providers()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``sqlite_only`` tests when the suite runs on PostgreSQL (SPACEDUCK_TEST_BACKEND)."""
    from django.db import connection

    if connection.vendor == "sqlite":
        return
    skip = pytest.mark.skip(reason="tests SQLite's own objects; this run is on PostgreSQL")
    for item in items:
        if "sqlite_only" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def migrator() -> Iterator[MigrationExecutor]:
    """Migrations to run back and forth in a test; every one applied again afterwards."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    yield executor
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
