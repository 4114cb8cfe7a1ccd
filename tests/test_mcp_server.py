"""The MCP server as a real subprocess (`manage.py mcp`), over stdio and streamable HTTP,
driven by the official SDK's client: tools, the remember -> recall round trip, context,
forget, the notes gate, grants, bad input, revoked and expired tokens."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from spaceduck.ops.benchmarks.mcp import wait_for_port
from tests.processes import (
    MANAGE,
    children_of,
    free_port,
    http_get,
    is_running,
    manage,
    service_env,
    start_manage,
    wait_for_http,
    wait_until,
)

pytestmark = pytest.mark.slow
T = TypeVar("T")

TOOLS = {
    "remember",
    "recall",
    "get_context",
    "forget",
    "list_memories",
    "save_note",
    "search_notes",
    "set_fact",
    "get_fact",
}

# Tokens of the deployment, made once per test by a shell in it; printed as JSON.
SETUP = """
import json
from memories.write.services import create_thread
from memories.write.ingest import memory_write
from memories.extraction.types import candidate_from_api
from notes.services import enable_note_search
from spaceduck.core.tokens import token_create
enable_note_search("user")
def make(name, namespaces, perms):
    created = token_create(name=name, namespaces=namespaces, permissions=perms)
    return {"id": created.token.pk, "secret": created.secret}
bob = memory_write(candidate_from_api({"kind": "fact", "content": "Bob lives in Oslo."}),
                   namespace="user:bob", actor="test")
rule = {"kind": "procedure", "procedure_subtype": "constraint",
        "content": "Never deploy on Fridays.", "importance": "critical"}
assert memory_write(candidate_from_api(rule), namespace="user:alice", actor="test").memory_id
print(json.dumps({
    "agent": make("agent", ["user:alice"], ["read", "write"]),
    "approver": make("approver", ["user:alice"], ["read", "write", "approve"]),
    "reader": make("reader", ["user:alice"], ["read"]),
    "bob_memory": bob.memory_id,
    "bob_thread": create_thread("user:bob").id,
}))
"""


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a thread of its own: in the whole suite the browser tests'
    Playwright leaves an event loop set on the main thread, where asyncio.run refuses."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def deployment(tmp_path: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """A migrated deployment (extraction inline), its tokens and some of bob's data."""
    env = service_env(tmp_path, SPACEDUCK_HUEY_IMMEDIATE="1")
    migrated = manage(env, "migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stderr
    made = manage(env, "shell", "-c", SETUP)
    assert made.returncode == 0, made.stderr
    return env, json.loads(made.stdout.strip().splitlines()[-1])


def revoke(env: dict[str, str], token_id: int) -> None:
    result = manage(env, "token", "revoke", str(token_id))
    assert result.returncode == 0, result.stderr


def expire(env: dict[str, str], token_id: int) -> None:
    """The token's expiry passes (set in the deployment, as time would)."""
    script = (
        "from django.utils import timezone; from spaceduck.models import ApiToken; "
        f"ApiToken.objects.filter(pk={token_id}).update(expires_at=timezone.now())"
    )
    result = manage(env, "shell", "-c", script)
    assert result.returncode == 0, result.stderr


def stdio_params(env: dict[str, str], secret: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[MANAGE, "mcp"], env={**env, "SPACEDUCK_MCP_TOKEN": secret}
    )


@pytest.fixture
def http_server(deployment: tuple[dict[str, str], dict[str, Any]]) -> Iterator[str]:
    env, _ = deployment
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, MANAGE, "mcp", "--http", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        run_async(wait_for_port(port, process))
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def http_client(url: str, secret: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def text(result: CallToolResult) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return text(result)


async def agent_session(client: Client, data: dict[str, Any]) -> None:
    """What an agent with read and write on user:alice does, and what it may not do."""
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    for tool in listed.tools:
        assert len(tool.description or "") > 40, tool.name
        assert tool.input_schema["type"] == "object"
    remember = next(tool for tool in listed.tools if tool.name == "remember")
    assert remember.input_schema["properties"]["mode"]["enum"] == ["message", "memory"]

    # remember a message -> extracted (inline here) -> recalled, with an explanation
    saved = await call(client, "remember", content="I live in Lisbon and I work as a nurse.")
    assert saved["mode"] == "message"
    assert saved["extraction"]["status"] == "done"
    thread_id = saved["thread_id"]
    hits = await call(client, "recall", query="where does the user live", explain=True)
    top = hits["memories"][0]
    assert "Lisbon" in top["memory"]["content"]
    assert top["memory"]["namespace"] == "user:alice"
    assert top["explanation"] is not None
    # a second turn of the same thread
    turn = await call(client, "remember", content="Thanks!", thread_id=thread_id, role="user")
    assert turn["thread_id"] == thread_id

    context = await call(client, "get_context", thread_id=thread_id, query="where do I live")
    assert "Lisbon" in context["system"]
    assert [m["content"] for m in context["messages"]][:1] == [
        "I live in Lisbon and I work as a nurse."
    ]

    # a memory statement: the write path decides; then forget it
    stored = await call(client, "remember", mode="memory", content="The user's sister is Ana.")
    assert stored["decision"] == "stored", stored
    again = await call(client, "remember", mode="memory", content="The user's sister is Ana.")
    assert again["decision"] == "duplicate"
    assert again["matched_memory_id"] == stored["memory_id"]
    listed_memories = await call(client, "list_memories", status=["active"])
    assert stored["memory_id"] in [m["id"] for m in listed_memories["memories"]]
    assert (await call(client, "forget", memory_id=stored["memory_id"])) == {
        "deleted": stored["memory_id"]
    }
    hits = await call(client, "recall", query="who is the user's sister")
    assert stored["memory_id"] not in [hit["memory"]["id"] for hit in hits["memories"]]
    assert "not found" in await refused(client, "forget", memory_id=stored["memory_id"])

    # a statement that holds for a while: its validity is stored; a bad one is refused
    stay = await call(
        client,
        "remember",
        mode="memory",
        content="The user is in Madrid for a conference.",
        valid_until="2999-01-01T00:00:00Z",
    )
    assert stay["decision"] == "stored", stay
    assert stay["memory"]["valid_until"] == "2999-01-01T00:00:00Z"
    assert "valid_until" in await refused(
        client, "remember", mode="memory", content="The user is in Rome.", valid_until="soon"
    )
    assert "mode=memory" in await refused(
        client, "remember", content="I'm in Rome.", valid_until="2999-01-01T00:00:00Z"
    )

    # facts
    await call(client, "set_fact", key="diet/allergies", value=["peanuts"])
    fact = await call(client, "get_fact", key="diet/allergies")
    assert fact["value"] == ["peanuts"]
    assert fact["namespace"] == "user:alice"
    assert "not found" in await refused(client, "get_fact", key="no/such/key")

    # the notes gate: a superseding note from a token without approve waits for review
    first = await call(client, "save_note", body="Deploys happen on Tuesdays.", kind="decision")
    assert first["status"] == "accepted"
    assert first["created"] is True
    second = await call(
        client, "save_note", body="Deploys happen on Thursdays.", supersedes=[first["id"]]
    )
    assert second["status"] == "pending"
    found = await call(client, "search_notes", query="deploys")
    assert [note["id"] for note in found["notes"]] == [first["id"]]
    found = await call(client, "search_notes", query="deploys", include_pending=True)
    assert {note["id"] for note in found["notes"]} == {first["id"], second["id"]}

    # grants: another namespace is "not found", exactly as the REST API answers
    other = await refused(client, "recall", query="where", namespace="user:bob")
    assert "namespace 'user:bob' not found" in other
    assert "not found" in await refused(client, "forget", memory_id=data["bob_memory"])
    assert "not found" in await refused(client, "get_context", thread_id=data["bob_thread"])
    assert "not found" in await refused(
        client, "remember", content="x", thread_id=data["bob_thread"]
    )

    # a resource: the namespace's constraints; another namespace's are not found
    templates = await client.list_resource_templates()
    uris = [template.uri_template for template in templates.resource_templates]
    assert uris == ["spaceduck://namespaces/{namespace}/constraints"]
    read = await client.read_resource("spaceduck://namespaces/user:alice/constraints")
    rules = read.contents[0].text  # type: ignore[union-attr]
    assert rules.startswith("# Constraints of user:alice")
    assert "- Never deploy on Fridays." in rules
    with pytest.raises(MCPError, match="not found"):
        await client.read_resource("spaceduck://namespaces/user:bob/constraints")

    # bad input: clear tool errors, and the server keeps serving
    assert "content" in await refused(client, "remember", content="")
    assert "top_k" in await refused(client, "recall", query="lisbon", top_k=0)
    assert "mode=message" in await refused(
        client, "remember", mode="memory", content="A fact.", thread_id=thread_id
    )
    assert "U+0000" in await refused(client, "remember", content="nul \x00 inside")
    assert "invalid namespace" in await refused(client, "list_memories", namespace="nonsense")
    assert "not found" in await refused(client, "forget", memory_id=2**62)
    assert "less than or equal" in await refused(client, "forget", memory_id=2**70)
    assert (await call(client, "get_fact", key="diet/allergies"))["value"] == ["peanuts"]


def test_stdio_an_agent_session_and_then_its_token_revoked(
    deployment: tuple[dict[str, str], dict[str, Any]],
) -> None:
    env, data = deployment

    async def session() -> None:
        async with Client(stdio_params(env, data["agent"]["secret"])) as client:
            await agent_session(client, data)
            revoke(env, data["agent"]["id"])  # while the session is open
            message = await refused(client, "recall", query="lisbon")
            assert "revoked" in message

    run_async(session())


def test_stdio_refuses_to_start_without_a_valid_token(
    deployment: tuple[dict[str, str], dict[str, Any]],
) -> None:
    env, data = deployment
    missing = manage(env, "mcp")
    assert missing.returncode != 0
    assert "SPACEDUCK_MCP_TOKEN" in missing.stderr
    revoke(env, data["reader"]["id"])
    revoked = manage(env, "mcp", "--token", data["reader"]["secret"])
    assert revoked.returncode != 0
    assert "revoked" in revoked.stderr
    assert revoked.stdout == ""  # nothing on the wire


def test_stdio_an_expired_token_stops_a_session_and_cannot_start_one(
    deployment: tuple[dict[str, str], dict[str, Any]],
) -> None:
    env, data = deployment

    async def session() -> None:
        async with Client(stdio_params(env, data["agent"]["secret"])) as client:
            assert (await call(client, "recall", query="fridays"))["memories"]
            expire(env, data["agent"]["id"])  # while the session is open
            assert "expired" in await refused(client, "recall", query="fridays")

    run_async(session())
    started = manage(env, "mcp", "--token", data["agent"]["secret"])
    assert started.returncode != 0
    assert "unknown, revoked or expired" in started.stderr
    assert started.stdout == ""  # nothing on the wire


def test_http_an_expired_token_is_a_401(
    deployment: tuple[dict[str, str], dict[str, Any]], http_server: str
) -> None:
    env, data = deployment
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {data['reader']['secret']}",
    }

    async def post() -> httpx2.Response:
        async with httpx2.AsyncClient() as http:
            return await http.post(http_server, json=ping, headers=headers)

    assert run_async(post()).status_code != 401  # past the auth (the session is another matter)
    expire(env, data["reader"]["id"])
    refused_answer = run_async(post())
    assert refused_answer.status_code == 401
    assert refused_answer.headers["www-authenticate"].startswith("Bearer")


def test_http_an_agent_session_other_tokens_and_a_revoked_one(
    deployment: tuple[dict[str, str], dict[str, Any]], http_server: str
) -> None:
    env, data = deployment

    async def session() -> None:
        async with http_client(http_server, data["agent"]["secret"]) as client:
            await agent_session(client, data)
        async with http_client(http_server, data["reader"]["secret"]) as client:
            message = await refused(client, "remember", content="I moved to Porto.")
            assert "lacks the 'write' permission" in message
            assert (await call(client, "recall", query="lisbon"))["memories"]
        async with http_client(http_server, data["approver"]["secret"]) as client:
            first = await call(client, "save_note", body="Backups run nightly.")
            second = await call(
                client, "save_note", body="Backups run hourly.", supersedes=[first["id"]]
            )
            assert second["status"] == "accepted"  # approve: no review needed
            revoke(env, data["approver"]["id"])
            with pytest.raises(MCPError):  # the next request is a 401
                await client.call_tool("recall", {"query": "backups"})
        with pytest.raises(BaseExceptionGroup) as unknown:  # the client's task group
            async with http_client(http_server, "sd_not_a_token") as client:
                await client.list_tools()
        assert unknown.group_contains(MCPError)  # its first request answered 401

    run_async(session())


def test_http_needs_a_bearer_token_and_one_of_the_allowed_hosts(
    deployment: tuple[dict[str, str], dict[str, Any]], http_server: str
) -> None:
    _, data = deployment
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    bearer = {"Authorization": f"Bearer {data['agent']['secret']}"}

    async def post(headers: dict[str, str]) -> httpx2.Response:
        async with httpx2.AsyncClient() as http:
            return await http.post(http_server, json=ping, headers={**accept, **headers})

    anonymous = run_async(post({}))
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    # DNS rebinding: a page on another name that resolves here is refused
    assert run_async(post({**bearer, "Host": "evil.example"})).status_code == 421


def test_serve_mcp_runs_the_endpoint_supervised_and_health_reports_it(
    deployment: tuple[dict[str, str], dict[str, Any]],
) -> None:
    """`serve --mcp HOST:PORT`: an MCP client lists the tools through it; SIGKILLed, the
    endpoint is started again; health says whether it answers."""
    env, data = deployment
    web, mcp = free_port(), free_port()
    server = start_manage(env, "serve", f"127.0.0.1:{web}", "--mcp", f"127.0.0.1:{mcp}")
    health = f"http://127.0.0.1:{web}/api/health"

    def report() -> dict[str, Any]:
        return json.loads(http_get(health)[1])

    async def tools() -> set[str]:
        async with http_client(f"http://127.0.0.1:{mcp}/mcp", data["agent"]["secret"]) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    try:
        wait_for_http(health, server)
        run_async(wait_for_port(mcp, server))
        assert run_async(tools()) == TOOLS
        assert report()["mcp"] == {"address": f"127.0.0.1:{mcp}", "answering": True, "status": 401}
        [endpoint] = [pid for pid in children_of(server.pid) if b"mcp" in _cmdline(pid)]
        server.send_signal(signal.SIGSTOP)  # the supervisor waits: health sees the gap
        try:
            os.kill(endpoint, signal.SIGKILL)
            wait_until(lambda: report()["mcp"]["answering"] is False, 30, "health to notice")
            body = report()
            assert body["status"] == "degraded"
            assert f"the MCP endpoint at 127.0.0.1:{mcp} is not answering" in body["problems"][0]
        finally:
            server.send_signal(signal.SIGCONT)
        wait_until(lambda: report()["mcp"]["answering"] is True, 60, "the endpoint restarted")
        [replacement] = [pid for pid in children_of(server.pid) if b"mcp" in _cmdline(pid)]
        assert replacement != endpoint
        assert run_async(tools()) == TOOLS
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert server.returncode == 0
    assert not is_running(replacement)


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
