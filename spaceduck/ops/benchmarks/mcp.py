"""Recall through MCP against the REST API, on the same data and server code.

``python manage.py bench mcp [--memories 10000] [--calls 200]``

A scratch deployment (scratch.py) is seeded with ``--memories`` memories in one
namespace (synthetic sentences, hash-embedded, as ``bench load`` seeds), then
serves them three ways: ``manage.py serve`` (gunicorn, the REST API), ``manage.py
mcp --http`` (streamable HTTP) and ``manage.py mcp`` over stdio, each a process of
its own. Each of ``--calls`` queries is sent to the three in turn, one call at a
time, so the machine's noise falls on all three alike; latency is measured at the
client (``httpx2`` for REST, the SDK's client for MCP) and printed as p50/p95 and
as a ratio to REST. The three answers to each query are compared (same memory ids
in the same order): the same services answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from spaceduck.core.private_files import open_private_log
from spaceduck.ops.benchmarks.scratch import Writer, run_child, setup_child_django

NAMESPACE = "user:load-0"  # bench load's seeding puts everything here with one namespace
TOP_K = 10
WARM_UP = 5  # queries sent each way first, not timed: connections, caches, first imports


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200, help="recall calls per way")
    parser.add_argument("--seed", type=int, default=0)


def run(options: dict[str, Any], stdout: Writer) -> None:
    config = {k: options[k] for k in ("memories", "calls", "seed")}
    run_child("spaceduck.ops.benchmarks.mcp", [json.dumps(config)], stdout)


def _start_mcp_http(port: int) -> subprocess.Popen[bytes]:
    from django.conf import settings

    log = open_private_log(Path(settings.DATA_DIR) / "mcp.log")  # lives with the server
    return subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--http", f"127.0.0.1:{port}"],
        cwd=settings.BASE_DIR,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


async def wait_for_port(port: int, process: subprocess.Popen[Any], deadline_s: float = 60) -> None:
    """Once something listens on 127.0.0.1:``port``; SystemExit if ``process`` ends first."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the MCP server exited with {process.returncode} before listening")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise SystemExit(f"manage.py mcp --http did not listen on {port} within {deadline_s:.0f} s")


def _ids_from_mcp(result: Any) -> list[int]:
    if result.is_error:
        raise SystemExit(f"MCP recall failed: {result.content}")
    return [hit["memory"]["id"] for hit in result.structured_content["memories"]]


async def _measure(
    queries: list[str], secret: str, rest_base: str, mcp_url: str
) -> tuple[dict[str, list[float]], int]:
    """Latency (ms) per way, and how many queries the three ways answered alike."""
    import httpx2
    from django.conf import settings
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {secret}"}
    stdio = StdioServerParameters(
        command=sys.executable,
        args=[str(Path(settings.BASE_DIR) / "manage.py"), "mcp"],
        env={**os.environ, "SPACEDUCK_MCP_TOKEN": secret},
        cwd=str(settings.BASE_DIR),
    )
    times: dict[str, list[float]] = {"REST": [], "MCP over HTTP": [], "MCP over stdio": []}
    agreed = 0
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        httpx2.AsyncClient(headers=headers, timeout=60) as mcp_http,
        Client(streamable_http_client(mcp_url, http_client=mcp_http)) as over_http,
        Client(stdio) as over_stdio,
    ):

        async def rest(query: str) -> list[int]:
            params = {"q": query, "namespace": NAMESPACE, "topK": TOP_K}
            response = await http.get(f"{rest_base}/api/memories/search", params=params)
            response.raise_for_status()
            return [hit["memory"]["id"] for hit in response.json()["memories"]]

        async def mcp_call(client: Client, query: str) -> list[int]:
            arguments = {"query": query, "namespace": NAMESPACE, "top_k": TOP_K}
            return _ids_from_mcp(await client.call_tool("recall", arguments))

        ways = {
            "REST": rest,
            "MCP over HTTP": lambda q: mcp_call(over_http, q),
            "MCP over stdio": lambda q: mcp_call(over_stdio, q),
        }
        for query in queries[:WARM_UP]:
            for call in ways.values():
                await call(query)
        for query in queries[WARM_UP:]:
            answers = []
            for name, call in ways.items():
                started = time.perf_counter()
                answers.append(await call(query))
                times[name].append((time.perf_counter() - started) * 1000)
            agreed += all(answer == answers[0] for answer in answers)
    return times, agreed


def child_main(config: dict[str, Any]) -> None:
    setup_child_django()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request otherwise
    from django.db import connection

    from spaceduck.ops.benchmarks.load import _free_port, _seed, _setup, _start_server
    from spaceduck.ops.benchmarks.vectors import words_of

    rng = np.random.default_rng(config["seed"])
    _seed(config["memories"], [NAMESPACE], config["seed"])
    secret, _ = _setup([NAMESPACE])
    queries = [" ".join(words_of(rng, 4)) for _ in range(WARM_UP + config["calls"])]
    rest_port, mcp_port = _free_port(), _free_port()
    server = _start_server(rest_port)
    mcp_http = _start_mcp_http(mcp_port)
    try:
        asyncio.run(wait_for_port(mcp_port, mcp_http))
        times, agreed = asyncio.run(
            _measure(
                queries,
                secret,
                f"http://127.0.0.1:{rest_port}",
                f"http://127.0.0.1:{mcp_port}/mcp",
            )
        )
    finally:
        for process in (mcp_http, server):
            process.terminate()
            process.wait(timeout=60)
    _report(times, agreed, config, connection.vendor)


def _report(
    times: dict[str, list[float]], agreed: int, config: dict[str, Any], vendor: str
) -> None:
    calls = len(times["REST"])
    print(
        f"recall, {calls} calls per way, one at a time ({config['memories']} memories in one "
        f"namespace, top {TOP_K}, {vendor}); the same answer from all three: {agreed}/{calls}"
    )
    base = {q: float(np.percentile(times["REST"], q)) for q in (50, 95)}
    for name, values in times.items():
        p50, p95 = (float(np.percentile(values, q)) for q in (50, 95))
        ratio = f" = {p50 / base[50]:.2f}x / {p95 / base[95]:.2f}x REST" if name != "REST" else ""
        print(f"  {name:15s} p50 {p50:6.2f} ms, p95 {p95:6.2f} ms{ratio}")


if __name__ == "__main__":
    child_main(json.loads(sys.argv[1]))
