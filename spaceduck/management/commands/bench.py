"""``manage.py bench <name> [options]``: run one of the registered benchmarks.

Each benchmark is a module exposing ``add_arguments(parser)`` and
``run(options, stdout)``; registering a new one is one line in BENCHMARKS.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

BENCHMARKS = {
    "beliefs": "spaceduck.ops.benchmarks.beliefs",
    "embed": "spaceduck.ops.benchmarks.embed",
    "extraction": "spaceduck.ops.benchmarks.extraction",
    "ingest": "spaceduck.ops.benchmarks.ingest",
    "load": "spaceduck.ops.benchmarks.load",
    "locomo": "spaceduck.ops.benchmarks.locomo",
    "longmemeval": "spaceduck.ops.benchmarks.longmemeval",
    "mcp": "spaceduck.ops.benchmarks.mcp",
    "pages": "spaceduck.ops.benchmarks.pages",
    "parse": "spaceduck.ops.benchmarks.parse",
    "recall": "spaceduck.ops.benchmarks.recall",
    "secondstage": "spaceduck.ops.benchmarks.secondstage",
    "startup": "spaceduck.ops.benchmarks.startup",
    "vectors": "spaceduck.ops.benchmarks.vectors",
}


class Command(BaseCommand):
    help = "Run a benchmark and print its timings."
    # Benchmarks build their own providers and data; a mismatch between the
    # configured embedder and the live index (system check E001) is irrelevant here.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--postgres",
            metavar="URL",
            help="Run the scratch deployments on PostgreSQL: a new database on this server "
            "(postgres://...), created for the run and dropped after it. Default: SQLite files.",
        )
        parser.add_argument(
            "--redis",
            metavar="URL",
            help="The scratch deployments' task queue on this Redis (redis://...); emptied "
            "at the start of each run that uses it. Default: the SQLite queue file.",
        )
        subparsers = parser.add_subparsers(dest="benchmark", required=True)
        for name, path in BENCHMARKS.items():
            module = import_module(path)
            summary = (module.__doc__ or "").strip().splitlines()[0:1]
            module.add_arguments(subparsers.add_parser(name, help=" ".join(summary)))

    def handle(self, *args: Any, **options: Any) -> None:
        from spaceduck.ops.benchmarks import scratch

        scratch.POSTGRES_SERVER = options["postgres"]
        scratch.REDIS_URL = options["redis"]
        import_module(BENCHMARKS[options["benchmark"]]).run(options, self.stdout)
