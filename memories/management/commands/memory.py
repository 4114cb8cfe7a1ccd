"""Facts from the command line: list, get, set, rm; plus TTL gc and thread compaction.

``memory list`` prints one fact per line as ``key = value (age)``:

- the value is shown raw when it is a string (``hello``, not ``"hello"``) and
  as compact JSON otherwise (``{"a":1}``); tabs and newlines are escaped so
  every fact stays on one line;
- a value longer than 100 characters is cut to its first 97 plus ``...``, so
  the shown value is never longer than 100 characters;
- the age is the time since the fact was last written: ``12s``, ``5m``, ``3h``,
  ``2d`` (whole units, rounded down).

Without a namespace every namespace is listed, each under a ``[namespace]``
header. ``memory get`` prints the stored value as JSON (strings quoted), so its
output can be fed back to ``memory set``. Every error is one line on stderr and
a non-zero exit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from itertools import groupby
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from memories.models import Fact
from memories.store import selectors
from memories.write import services
from spaceduck.core.errors import ServiceError

MAX_SHOWN_VALUE = 100
_ELLIPSIS = "..."
_ONE_LINE = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


class _ActionParser(CommandParser):
    """Reports a bad argument of an action in one line instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
        raise CommandError(f"Error: {message}")


class Command(BaseCommand):
    help = (
        "Manage facts: list [NAMESPACE], get NS KEY, set NS KEY JSON [--ttl MS], rm NS KEY; "
        "gc deletes expired facts; compact runs thread compaction. "
        "`list` shows string values raw and other values as compact JSON, cut to 100 "
        "characters (97 + '...')."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(
            dest="action", required=True, metavar="ACTION", parser_class=_ActionParser
        )
        listing = actions.add_parser("list", help="List live facts as `key = value (age)`.")
        listing.add_argument("namespace", nargs="?", help="Only this namespace (default: all).")
        get = actions.add_parser("get", help="Print a fact's value as JSON.")
        get.add_argument("namespace")
        get.add_argument("key")
        put = actions.add_parser("set", help="Set a fact to a JSON value.")
        put.add_argument("namespace")
        put.add_argument("key")
        put.add_argument("value", help="A JSON value, e.g. '\"text\"', 42, '{\"a\": 1}'.")
        put.add_argument("--ttl", type=int, default=None, metavar="MS", help="Expire after MS ms.")
        remove = actions.add_parser("rm", help="Delete a fact (missing keys are fine).")
        remove.add_argument("namespace")
        remove.add_argument("key")
        actions.add_parser("gc", help="Delete expired facts and print how many.")
        actions.add_parser("compact", help="Run thread compaction (summaries, token limits).")
        purge = actions.add_parser(
            "purge-skill", help="Delete every memory a skill wrote (with its index rows)."
        )
        purge.add_argument("skill_id")
        actions.add_parser(
            "claims",
            help="Read what memories stored before claims existed claim (facts without one).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        handler = getattr(self, f"_{options['action'].replace('-', '_')}")
        try:
            handler(options)
        except ServiceError as exc:  # one clear line, exit status 1
            raise CommandError(str(exc)) from exc

    def _list(self, options: dict[str, Any]) -> None:
        namespace = options["namespace"]
        if namespace is None:
            self._list_all(selectors.list_all_facts())
            return
        facts = selectors.list_facts(namespace)
        if not facts:
            canonical = selectors.clean_namespace(namespace)
            self.stdout.write(f'No facts found in namespace "{canonical}".')
        self._write_facts(facts, timezone.now())

    def _list_all(self, facts: list[Fact]) -> None:
        if not facts:
            self.stdout.write("No facts found.")
            return
        now = timezone.now()
        for namespace, group in groupby(facts, key=lambda fact: fact.namespace):
            self.stdout.write(f"[{namespace}]")
            self._write_facts(group, now)

    def _write_facts(self, facts: Iterable[Fact], now: datetime) -> None:
        for fact in facts:
            self.stdout.write(
                f"{fact.key} = {shown_value(fact.value)} ({age(fact.updated_at, now)})"
            )

    def _get(self, options: dict[str, Any]) -> None:
        fact = selectors.get_fact(options["namespace"], options["key"])
        if fact is None:
            namespace = selectors.clean_namespace(options["namespace"])
            raise CommandError(f'No fact "{options["key"]}" in namespace "{namespace}".')
        self.stdout.write(json.dumps(fact.value, ensure_ascii=False))

    def _set(self, options: dict[str, Any]) -> None:
        try:
            value = json.loads(options["value"])
        except json.JSONDecodeError as exc:
            raise CommandError(
                f"VALUE is not valid JSON ({exc}); quote text as JSON, e.g. '\"hello\"'"
            ) from None
        fact = services.set_fact(
            options["namespace"], options["key"], value, ttl_ms=options["ttl"], actor="cli"
        )
        self.stdout.write(f'Set "{fact.key}" in namespace "{fact.namespace}".')

    def _rm(self, options: dict[str, Any]) -> None:
        removed = services.delete_fact(options["namespace"], options["key"], actor="cli")
        where = f'"{options["key"]}" in namespace "{options["namespace"]}"'
        self.stdout.write(f"Removed {where}." if removed else f"No fact {where}; nothing to do.")

    def _gc(self, options: dict[str, Any]) -> None:
        from memories.upkeep.compaction import run_ttl_gc  # logs the run like the periodic task

        deleted = run_ttl_gc()
        self.stdout.write(f"Deleted {deleted} expired fact{'' if deleted == 1 else 's'}.")

    def _compact(self, options: dict[str, Any]) -> None:
        # Imported here so the fact commands work even while compaction (and
        # its LLM provider set-up) is unavailable.
        from memories.upkeep.compaction import run_compaction

        run_compaction(stdout=self.stdout)

    def _claims(self, options: dict[str, Any]) -> None:
        from memories.write.lifecycle import claims_backfill

        read, examined, opened = claims_backfill()
        self.stdout.write(f"Read a claim for {read} of {examined} memories without one.")
        if opened:
            self.stdout.write(
                f"{opened} pairs of live memories claim different values of one thing: "
                "they wait in the conflict inbox (/review/conflicts/)."
            )

    def _purge_skill(self, options: dict[str, Any]) -> None:
        from memories.write.lifecycle import skill_purge

        deleted = skill_purge(skill_id=options["skill_id"], namespaces=None, actor="cli")
        self.stdout.write(
            f"Deleted {deleted} memor{'y' if deleted == 1 else 'ies'} of skill "
            f"{options['skill_id']!r}."
        )


def shown_value(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    text = text.translate(_ONE_LINE)
    if len(text) > MAX_SHOWN_VALUE:
        return text[: MAX_SHOWN_VALUE - len(_ELLIPSIS)] + _ELLIPSIS
    return text


def age(since: datetime, now: datetime) -> str:
    seconds = max(0, int((now - since).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
