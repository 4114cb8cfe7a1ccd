"""What every `manage.py` command loads before it starts: not the API, the admin's
modules, the extraction pipeline, numpy, nor the queue clients the deployment does not
use (`manage.py bench startup` measures the CPU this saves; no timing is asserted here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from tests.processes import service_env

# Loaded lazily: by the URLconf (requests, `check`), by a task when it runs, or never.
NOT_AT_START = [
    "redis",
    "psycopg",
    "ninja",
    "pydantic",
    "numpy",
    "sqlite_vec",
    "memories.admin",
    "memories.api",
    "memories.extraction.pipeline",
    "memories.write.runner",
    "spaceduck.ops.api",
]

LOADED = (
    "import json, sys, django; django.setup(); "
    "from django.core.management import get_commands; get_commands(); "
    "print(json.dumps(sorted(sys.modules)))"
)


def loaded_at_start(env: dict[str, str], code: str = LOADED) -> set[str]:
    """The modules a fresh interpreter holds after ``code`` (which prints them)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout))


def test_a_command_starts_without_the_api_the_pipeline_or_unused_clients(tmp_path: Path) -> None:
    env = service_env(tmp_path, SPACEDUCK_REDIS_URL="", SPACEDUCK_DATABASE_URL="")
    loaded = loaded_at_start(env)
    assert "memories.tasks" in loaded  # the apps did load
    assert [name for name in NOT_AT_START if name in loaded] == []


def test_the_redis_client_is_loaded_when_the_queue_is_on_redis(tmp_path: Path) -> None:
    env = service_env(
        tmp_path, SPACEDUCK_REDIS_URL="redis://127.0.0.1:9/0", SPACEDUCK_DATABASE_URL=""
    )
    loaded = loaded_at_start(env)
    assert "redis" in loaded
    assert "psycopg" not in loaded  # huey's PostgreSQL queue is never used


def test_the_apps_are_configured_by_their_own_configs() -> None:
    """spaceduck/apps.py holds two configs: the app's own (whose ready() registers the
    start-up checks) must still be the one Django picks for "spaceduck"."""
    from django.apps import apps

    from spaceduck.apps import LazyAdminConfig, SpaceduckConfig

    assert type(apps.get_app_config("spaceduck")) is SpaceduckConfig
    assert type(apps.get_app_config("admin")) is LazyAdminConfig


URLCONF_LOADED = (
    "import json, sys, django; django.setup(); "
    "from django.urls import get_resolver; get_resolver().url_patterns; "
    "print(json.dumps(sorted(sys.modules)))"
)


def test_the_urlconf_leaves_the_extraction_stages_to_the_worker(tmp_path: Path) -> None:
    """Every command that runs the system checks loads the URLconf (the API, the views,
    the write path); the stages' patterns and the parser load with the first extraction."""
    env = service_env(tmp_path, SPACEDUCK_REDIS_URL="", SPACEDUCK_DATABASE_URL="")
    loaded = loaded_at_start(env, URLCONF_LOADED)
    assert "spaceduck.ops.api" in loaded  # the URLconf did load
    assert "memories.extraction.pipeline" not in loaded
    assert "memories.extraction.clauses" not in loaded
    assert "spacy" not in loaded


def test_the_admin_s_checks_still_see_every_model_admin() -> None:
    """The admin is discovered lazily (spaceduck.apps.LazyAdminConfig): its checks
    discover it first."""
    from django.contrib import admin

    from spaceduck.apps import check_discovered_admin

    assert check_discovered_admin() == []
    labels = {model._meta.label for model in admin.site._registry}
    assert {"memories.Memory", "notes.Note", "spaceduck.ApiToken"} <= labels


@pytest.mark.slow
def test_bench_startup_prints_the_median_cpu_of_each_command() -> None:
    out = StringIO()
    call_command("bench", "startup", "--commands", "help", "--runs", "1", stdout=out)
    assert re.fullmatch(
        r"manage\.py help: median \d+\.\d\d s CPU \(min \d+\.\d\d, max \d+\.\d\d, 1 runs\)\n",
        out.getvalue(),
    )
