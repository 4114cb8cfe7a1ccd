"""What stands on the apps: the API root (mounting each app's routers), health, the
operations dashboard pages, backup, export/import (transfer), erasure of a person's
data, people search, the demo data, screenshots, the MCP server and the benchmarks.

May import the apps and spaceduck.core; nothing in spaceduck.core or the apps imports it.
The Django entry points stay at spaceduck/ (settings, urls, asgi, wsgi, apps, models,
admin, tasks, management commands, migrations), as does the public Python API
(spaceduck.store).
"""
