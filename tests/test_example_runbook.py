"""The incident-runbook example runs end to end against a live server, twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from notes.selectors import list_notes
from spaceduck.core.tokens import token_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
EXAMPLE = Path(settings.BASE_DIR) / "examples" / "incident_runbook.py"


def run_example(url: str, agent: str, approver: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--base-url",
            url,
            "--agent-token",
            agent,
            "--approver-token",
            approver,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_runbook_loop_runs_and_each_run_supersedes_the_last(live_server) -> None:  # type: ignore[no-untyped-def]
    agent = token_create(
        name="oncall-agent", namespaces=["workflow:oncall"], permissions=["read", "write"]
    ).secret
    approver = token_create(
        name="lead", namespaces=["workflow:*"], permissions=["read", "write", "approve"]
    ).secret
    first = run_example(live_server.url, agent, approver)
    assert first.returncode == 0, first.stdout + first.stderr
    for stage in ("recall", "triage", "bank", "distill", "ratify"):
        assert f"== {stage}" in first.stdout
    live = list_notes("workflow:oncall")
    assert len(live) == 1
    assert "logrotate" in live[0].body
    assert live[0].status_by == "token:lead"

    second = run_example(live_server.url, agent, approver)
    assert second.returncode == 0, second.stdout + second.stderr
    newest = list_notes("workflow:oncall")
    assert len(newest) == 1
    assert newest[0].uid != live[0].uid  # the second run superseded the first one's runbook
