#!/usr/bin/env python3
"""An incident runbook loop through the JSON API: recall, triage, bank, distill, ratify.

An on-call agent handles an incident with the team's runbook notes, then proposes
a better runbook; a person (a token with the `approve` permission) ratifies it.
The agent alone cannot replace knowledge: its superseding note waits as pending.

    python examples/incident_runbook.py --base-url http://127.0.0.1:8000 \\
        --agent-token sd_... --approver-token sd_...

Tokens (create them with `python manage.py token create ...`):
  agent:    --namespace workflow:oncall --perm read,write
  approver: --namespace 'workflow:*'   --perm read,write,approve
Standard library only; every step checks the answer and stops with a message if it is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

NAMESPACE = "workflow:oncall"
SEED_RUNBOOK = (
    "Disk full on a database host: find the largest files with `du -xh / | sort -h | tail`, "
    "rotate and compress old logs, then confirm free space with `df -h`."
)


class Api:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        if status != expect:
            sys.exit(f"{method} {path}: expected {expect}, got {status}: {payload.decode()[:300]}")
        return json.loads(payload) if payload else None


def step(title: str) -> None:
    print(f"\n== {title}")


def seed(approver: Api) -> None:
    """Make sure the team has a runbook and note search is on for workflow namespaces."""
    approver.call("POST", "/api/notes/search/workflow/enable")
    approver.call(
        "POST",
        "/api/notes",
        {
            "namespace": NAMESPACE,
            "id": "runbook-disk-full",
            "kind": "runbook",
            "body": SEED_RUNBOOK,
        },
        expect=201 if not note_exists(approver, "runbook-disk-full") else 200,
    )


def note_exists(api: Api, note_id: str) -> bool:
    listing = api.call(
        "GET", f"/api/notes?namespace={NAMESPACE}&status=any&include_superseded=true"
    )
    return any(note["id"] == note_id for note in listing["notes"])


def recall(agent: Api, keywords: str) -> dict[str, Any]:
    # Note search matches every word (like a search box), so ask with keywords.
    step("recall: search the team's runbooks for the symptom's keywords")
    query = urllib.parse.urlencode({"kind": "workflow", "q": keywords, "namespace": NAMESPACE})
    hits = agent.call("GET", f"/api/notes/search?{query}")["notes"]
    if not hits:
        sys.exit("no runbook matched; the seed step should have created one")
    for hit in hits:
        print(f"  [{hit['score']:.2f}] {hit['id']}: {hit['body'][:80]}")
    return hits[0]


def triage(agent: Api, incident: str, symptom: str) -> None:
    step("triage: keep the incident's working state as a fact with a TTL")
    value = {"incident": incident, "severity": "sev2", "symptom": symptom, "host": "db-1"}
    fact = agent.call(
        "PUT", f"/api/facts/{NAMESPACE}/incident.current", {"value": value, "ttl_ms": 86_400_000}
    )
    print(f"  incident.current = {json.dumps(fact['value'])} (expires {fact['expires_at']})")


def bank(agent: Api, incident: str, runbook: dict[str, Any]) -> str:
    step("bank: record what happened in a thread")
    thread = agent.call("POST", "/api/threads", {"namespace": NAMESPACE, "title": incident}, 201)
    for role, content in [
        ("user", "PagerDuty: db-1 disk usage 98%"),
        (
            "assistant",
            f"Following runbook {runbook['id']}: largest files are in /var/log/postgres.",
        ),
        ("tool", {"command": "df -h /", "use_percent": 61}),
        ("assistant", "Old postgres logs were never rotated: logrotate had no rule for them."),
    ]:
        agent.call(
            "POST", f"/api/threads/{thread['id']}/messages", {"role": role, "content": content}, 201
        )
    count = len(agent.call("GET", f"/api/threads/{thread['id']}/messages")["messages"])
    print(f"  thread {thread['id']} holds {count} messages")
    return str(thread["id"])


def distill(agent: Api, incident: str, runbook: dict[str, Any], thread_id: str) -> str:
    step("distill: propose a better runbook that supersedes the one used")
    note = agent.call(
        "POST",
        "/api/notes",
        {
            "namespace": NAMESPACE,
            "id": f"runbook-disk-full-{incident.lower()}",
            "kind": "runbook",
            "body": runbook["body"] + " If postgres logs fill the disk, add a logrotate rule "
            "for /var/log/postgres (daily, rotate 7, compress) before closing the incident.",
            "supersedes": [runbook["id"]],
            "provenance": {"run_id": incident, "node_id": thread_id},
        },
        expect=201,
    )
    if note["status"] != "pending":
        sys.exit(f"an agent token's superseding note must wait for review, got {note['status']}")
    live = agent.call("GET", f"/api/notes?namespace={NAMESPACE}")["notes"]
    print(f"  {note['id']} is pending; the team still reads {[n['id'] for n in live]}")
    return str(note["id"])


def ratify(approver: Api, note_id: str, old_id: str) -> None:
    step("ratify: a person with the approve permission accepts it")
    note = approver.call("POST", f"/api/notes/{note_id}/status", {"status": "accepted"})
    live = [n["id"] for n in approver.call("GET", f"/api/notes?namespace={NAMESPACE}")["notes"]]
    if note_id not in live or old_id in live:
        sys.exit(f"after ratification the live runbooks should be {note_id}, got {live}")
    print(f"  {note['id']} accepted by {note['status_by']}; live runbooks: {live}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", default=os.environ.get("SPACEDUCK_URL", "http://127.0.0.1:8000")
    )
    parser.add_argument("--agent-token", default=os.environ.get("SPACEDUCK_AGENT_TOKEN"))
    parser.add_argument("--approver-token", default=os.environ.get("SPACEDUCK_APPROVER_TOKEN"))
    args = parser.parse_args()
    if not (args.agent_token and args.approver_token):
        parser.error("both --agent-token and --approver-token are needed (see --help)")
    agent, approver = Api(args.base_url, args.agent_token), Api(args.base_url, args.approver_token)
    incident = f"INC-{int(time.time() * 1000)}"
    symptom = "disk full on db-1"
    seed(approver)
    runbook = recall(agent, "disk full")
    triage(agent, incident, symptom)
    thread_id = bank(agent, incident, runbook)
    note_id = distill(agent, incident, runbook, thread_id)
    ratify(approver, note_id, runbook["id"])
    print(f"\n{incident}: recall -> triage -> bank -> distill -> ratify done.")


if __name__ == "__main__":
    main()
