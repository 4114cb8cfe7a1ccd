"""One BLAS thread for the processes that serve requests (set before numpy loads).

Concurrency in a serving process comes from requests (threads, processes), and
every vector product is small (one query against one namespace). OpenBLAS's own
threads only spin against the request threads for the same cores: with them a
search cost 27 ms of CPU instead of 10 and a context build 79 instead of 22 (10k
memories, 2 cores); two idle MCP servers' spinning threads made REST recall beside
them 12.2 ms at p50 instead of 6.1, and MCP recall over HTTP 20.6 instead of 7.5
(``bench mcp``, 10k memories). An operator's explicit setting wins.
"""

from __future__ import annotations

from collections.abc import MutableMapping

VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# manage.py commands that serve requests or tasks for as long as they run.
SERVING_COMMANDS = frozenset({"serve", "worker", "mcp"})


def one_thread(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    for name in VARIABLES:
        env.setdefault(name, "1")
    return env
