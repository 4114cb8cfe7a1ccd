"""Saving one id concurrently: one note, and only the winner's supersession edges.

The test database is a file, so each thread's own connection (and each
process) gets real SQLite locking, as in production.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from notes.models import Note, NoteSupersession
from notes.services import enable_note_search, save_note
from tests.notes.search_index import check_integrity, indexed_ids
from tests.processes import manage, service_env, start_manage

NS = "user:alice"
RACERS = 8


def supersedes_for(racer: int) -> list[str]:
    # Every racer proposes different edges, so the stored ones name the winner.
    return [f"t{racer}", f"t{(racer + 1) % RACERS}"]


def run_in_threads(target, count: int) -> list[object]:  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = target(index)
        except Exception as exc:  # reported by the assertions below
            results[index] = exc
        finally:
            connection.close()  # each thread owns its connection

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.django_db(transaction=True)
def test_threads_racing_on_one_id_store_one_note_with_only_the_winners_edges() -> None:
    for racer in range(RACERS):
        save_note(NS, f"target {racer}", id=f"t{racer}")

    def save(racer: int) -> str:
        note = save_note(NS, f"from {racer}", supersedes=supersedes_for(racer), id="race")
        return note.body

    results = run_in_threads(save, RACERS)
    assert not [r for r in results if isinstance(r, Exception)], results
    stored = Note.objects.get(uid="race")
    assert set(results) == {stored.body}  # every racer got the stored note back
    winner = int(stored.body.removeprefix("from "))
    edges = set(NoteSupersession.objects.values_list("note__uid", "target__uid"))
    assert edges == {("race", target) for target in supersedes_for(winner)}


@pytest.mark.django_db(transaction=True)
def test_threads_racing_to_enable_search_index_each_note_once() -> None:
    for number in range(20):
        save_note(NS, f"shared words {number}")
    results = run_in_threads(lambda _: enable_note_search("user"), 4)
    assert sum(r.newly_enabled for r in results) == 1  # type: ignore[attr-defined]
    assert sum(r.backfilled for r in results) == 20  # type: ignore[attr-defined]
    check_integrity()
    assert len(indexed_ids("shared")) == 20


RACER_SCRIPT = """
import json, os, pathlib, time
from notes.models import Note
from notes.services import save_note
racer = int(os.environ["NOTE_RACER"])
race_dir = pathlib.Path(os.environ["NOTE_RACE_DIR"])
Note.objects.exists()  # connect before the start line
(race_dir / f"ready-{racer}").touch()
while not (race_dir / "go").exists():
    time.sleep(0.002)
targets = [f"t{racer}", f"t{(racer + 1) % int(os.environ['NOTE_RACERS'])}"]
note = save_note("user:alice", f"from {racer}", supersedes=targets, id="race")
print(json.dumps({"body": note.body}))
"""

SETUP_SCRIPT = """
import os
from notes.services import save_note
for racer in range(int(os.environ["NOTE_RACERS"])):
    save_note("user:alice", f"target {racer}", id=f"t{racer}")
"""

REPORT_SCRIPT = """
import json
from notes.models import Note, NoteSupersession
print(json.dumps({
    "bodies": list(Note.objects.filter(uid="race").values_list("body", flat=True)),
    "edges": sorted(NoteSupersession.objects.values_list("target__uid", flat=True)),
}))
"""


@pytest.mark.slow
def test_processes_racing_on_one_id_store_one_note_with_only_the_winners_edges(
    tmp_path: Path,
) -> None:
    racers = 4
    env = service_env(tmp_path / "data", NOTE_RACERS=str(racers))
    assert manage(env, "migrate", "--no-input").returncode == 0
    assert manage(env, "shell", "-c", SETUP_SCRIPT).returncode == 0
    race_dir = tmp_path / "race"
    race_dir.mkdir()
    processes = [
        start_manage(
            {**env, "NOTE_RACER": str(i), "NOTE_RACE_DIR": str(race_dir)},
            "shell",
            "-c",
            RACER_SCRIPT,
        )
        for i in range(racers)
    ]
    try:
        deadline = time.monotonic() + 120
        while len(list(race_dir.glob("ready-*"))) < racers:
            assert time.monotonic() < deadline, "racers did not start"
            assert all(p.poll() is None for p in processes), "a racer died before the start"
            time.sleep(0.05)
        (race_dir / "go").touch()
        outputs = [p.communicate(timeout=120)[0] for p in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert all(p.returncode == 0 for p in processes), outputs
    bodies = {json.loads(out.strip().splitlines()[-1])["body"] for out in outputs}
    report = manage(env, "shell", "-c", REPORT_SCRIPT)
    state = json.loads(report.stdout.strip().splitlines()[-1])
    assert len(state["bodies"]) == 1
    assert bodies == set(state["bodies"])
    racers_now = [int(b.removeprefix("from ")) for b in state["bodies"]]
    winner = racers_now[0]
    expected = sorted([f"t{winner}", f"t{(winner + 1) % racers}"])
    assert state["edges"] == expected
