"""WSGI entry point. Refuses to start when the stored vectors do not fit the embedder."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spaceduck.settings")
application = get_wsgi_application()

from spaceduck.ops.checks import raise_on_startup_problems  # noqa: E402

raise_on_startup_problems()

from memories.extraction.firewall import warm  # noqa: E402

warm()  # the firewall's tables, loaded before the first request rather than during it
