"""Logs without personal data (issue 37, item 7): what people search for and their e-mail
addresses are written to no log, the application's nor the web server's access log.

Requests carry them in the query (``/people/?q=<e-mail>``, recall's ``?q=``, the dashboard's
``?q=``), in a namespace in the path (``/api/facts/user:<e-mail>/...``) and in the referer.
The rules (spaceduck.core.logs): query values, namespace ids and e-mail addresses are replaced
by ``[redacted]``; parameter names, the rest of the path, the status stay.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.test import Client
from gunicorn.config import Config

from memories.write.services import memory_create
from spaceduck.core.logs import (
    AccessLog,
    redact_path,
    redact_query,
    redact_target,
    redact_text,
    redact_url,
)
from tests.conftest import Actor, make_actor
from tests.processes import free_port, manage, service_env, start_manage, wait_for_http

EMAIL = "zoe.quillfeather@example.org"
SEARCH = "zeppelin quillfeather"
PERSON_NS = f"user:{EMAIL}"


def _leaks(text: str) -> list[str]:
    return [
        secret
        for secret in (EMAIL, "quillfeather", "zoe.quill", "example.org")
        if secret in text.lower()
    ]


@pytest.fixture
def person(db: None) -> Actor:
    """A namespace named after a person's e-mail, with a memory quoting it."""
    memory_create(
        namespace=PERSON_NS,
        kind="fact",
        content=f"Zoe likes zeppelin quillfeather rides; write to {EMAIL}.",
        actor="t",
    )
    return make_actor([PERSON_NS], ["read", "write"], name="zoe-agent")


@pytest.mark.django_db
def test_searches_and_a_namespace_in_the_path_leave_no_trace_in_any_log_record(
    caplog: pytest.LogCaptureFixture,
    staff_client: Client,
    person: Actor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    assert staff_client.get("/people/", {"q": EMAIL}).status_code == 200
    assert staff_client.get("/people/", {"q": EMAIL}, headers={"HX-Request": "true"}).status_code
    hits = person.get("/api/memories/search", {"q": SEARCH, "namespace": PERSON_NS})
    assert hits.status_code == 200
    assert hits.json()["memories"]  # the recall ran and found it
    recall = staff_client.get("/", {"q": SEARCH, "namespace": PERSON_NS})
    assert recall.status_code == 200
    assert "quillfeather" in recall.content.decode()
    assert staff_client.get("/", {"q": SEARCH}, headers={"HX-Request": "true"}).status_code == 200
    # Logged by Django (4xx: "Not Found: <path>") and by the API's 500 handler.
    assert person.get(f"/api/facts/{PERSON_NS}/nothing-here").status_code == 404
    stranger = make_actor(["user:bob"], ["read"], name="bob-agent")
    assert stranger.get("/api/memories/search", {"q": EMAIL, "namespace": PERSON_NS}).status_code
    monkeypatch.setattr(
        "memories.store.selectors.get_fact",
        lambda *a: (_ for _ in ()).throw(RuntimeError(f"no fact for {EMAIL}")),
    )
    assert person.get(f"/api/facts/{PERSON_NS}/some-key").status_code == 500

    logged = [f"{r.name} {r.levelname} {r.getMessage()}" for r in caplog.records]
    assert (
        "spaceduck.ops.api ERROR unexpected error on GET /api/facts/user:[redacted]/some-key"
        in (logged)
    )
    assert any(
        line.startswith("django.request WARNING Not Found: /api/facts/user:[redacted]/nothing-here")
        for line in logged
    ), logged
    assert "RuntimeError: no fact for [redacted]" in caplog.text  # the traceback, redacted
    assert _leaks("\n".join(logged) + caplog.text) == []


def test_runserver_request_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    """runserver's logger (django.server) writes the request line as its first argument."""
    caplog.set_level(logging.DEBUG)
    logging.getLogger("django.server").info(
        '"%s" %s %s', f"GET /people/?q={EMAIL}&page=2 HTTP/1.1", "200", "512"
    )
    assert (
        caplog.records[-1].getMessage()
        == '"GET /people/?q=[redacted]&page=[redacted] HTTP/1.1" 200 512'
    )


def test_the_rules() -> None:
    assert redact_query(f"q={EMAIL}&page=2&empty=") == "q=[redacted]&page=[redacted]&empty="
    assert redact_query(EMAIL) == "[redacted]"  # a bare word is a value
    assert redact_query(f"{EMAIL}=1") == "[redacted]=[redacted]"  # so is an odd name
    assert redact_path(f"/api/namespaces/{PERSON_NS}") == "/api/namespaces/user:[redacted]"
    assert redact_path("/api/namespaces/agent%3Azoe/") == "/api/namespaces/agent:[redacted]/"
    assert redact_path(f"/threads/{EMAIL}/") == "/threads/[redacted]/"
    assert redact_path("/memories/12/edit/") == "/memories/12/edit/"  # nothing personal: kept
    assert redact_target("/?q=x#frag") == "/?q=[redacted]#[redacted]"
    assert redact_url(f"https://zoe:pw@host:8000/people/?q={EMAIL}") == (
        "https://host:8000/people/?q=[redacted]"
    )
    assert redact_text(f"Not Found: /api/facts/{PERSON_NS}/k") == (
        "Not Found: /api/facts/user:[redacted]/k"
    )
    assert redact_text(f"mail {EMAIL} now") == "mail [redacted] now"
    assert redact_text("worker heartbeat failed in /srv/spaceduck/var") == (
        "worker heartbeat failed in /srv/spaceduck/var"
    )


def test_gunicorn_access_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    """The unit under the real server's access log (the next test runs the server)."""
    cfg = Config()
    cfg.set("accesslog", "-")
    log = AccessLog(cfg)
    log.access_log.propagate = True  # to caplog; gunicorn writes it to stdout itself
    caplog.set_level(logging.DEBUG)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/api/namespaces/{PERSON_NS}?q={EMAIL}",
        "PATH_INFO": f"/api/namespaces/{PERSON_NS}",
        "QUERY_STRING": f"q={EMAIL}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": f"http://127.0.0.1/people/?q={EMAIL}",
        "HTTP_USER_AGENT": "test",
    }
    response = SimpleNamespace(status="200 OK", sent=10, headers=[])
    request = SimpleNamespace(headers=[("REFERER", environ["HTTP_REFERER"])])
    log.access(response, request, environ, timedelta(milliseconds=3))
    line = caplog.records[-1].getMessage()
    assert '"GET /api/namespaces/user:[redacted]?q=[redacted] HTTP/1.1" 200 10' in line
    assert '"http://127.0.0.1/people/?q=[redacted]"' in line
    assert _leaks(line) == []


@pytest.mark.slow
def test_the_real_servers_access_log_holds_no_search_text_or_e_mail(tmp_path: Path) -> None:
    """`serve` as `make run` starts it (gunicorn, access log on stdout), on a free port."""
    env = service_env(tmp_path)
    assert manage(env, "migrate", "--no-input").returncode == 0
    port = free_port()
    server = start_manage(env, "serve", f"127.0.0.1:{port}", "--no-worker")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/api/health", server)
        for target in (
            f"/people/?q={EMAIL}",  # to the login page: logged all the same
            f"/api/memories/search?q={SEARCH.replace(' ', '+')}&namespace={PERSON_NS}",
            f"/?q={SEARCH.replace(' ', '%20')}",
            f"/api/facts/{PERSON_NS}/contact",
        ):
            request = urllib.request.Request(
                base + target, headers={"Referer": f"{base}/people/?q={EMAIL}"}
            )
            # 401 without a token: the line is written all the same.
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=10).close()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    output = server.stdout.read() if server.stdout else ""
    assert "GET /people/?q=[redacted] HTTP/1.1" in output, output
    assert "GET /api/memories/search?q=[redacted]&namespace=[redacted] HTTP/1.1" in output
    assert "GET /api/facts/user:[redacted]/contact HTTP/1.1" in output
    assert f'"{base}/people/?q=[redacted]"' in output  # the referer
    assert _leaks(output) == [], output
