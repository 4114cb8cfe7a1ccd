#!/usr/bin/env python
"""Django's command-line utility for spaceduck."""

from __future__ import annotations

import os
import sys

from spaceduck.core.blas import SERVING_COMMANDS, one_thread


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spaceduck.settings")
    if sys.argv[1:2] and sys.argv[1] in SERVING_COMMANDS:
        one_thread(os.environ)  # before numpy is imported (spaceduck/core/blas.py says why)
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A configuration mistake deserves one clear line, not a stack trace.
        sys.stderr.write(f"ImproperlyConfigured: {exc}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
