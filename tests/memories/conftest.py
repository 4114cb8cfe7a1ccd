"""Fixtures for the memories tests."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone


class Clock:
    """A stopped clock that tests move by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Stops ``django.utils.timezone.now`` (which services and selectors read)."""
    stopped = Clock(timezone.now().replace(microsecond=0))
    monkeypatch.setattr(timezone, "now", stopped)
    return stopped
