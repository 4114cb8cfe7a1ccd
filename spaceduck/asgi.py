"""ASGI entry point. Refuses to start when the stored vectors do not fit the embedder."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spaceduck.settings")
application = get_asgi_application()

from spaceduck.ops.checks import raise_on_startup_problems  # noqa: E402

raise_on_startup_problems()
