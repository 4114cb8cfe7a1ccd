"""axe-core in a Playwright page (issue 40 item 6), shared by the dashboard's walk
(test_accessibility_browser) and the admin's (test_admin_accessibility_browser).

axe-core comes from the axe-playwright-python package (its axe.min.js, axe-core 4.12,
MPL-2.0), pinned in pyproject's dev extra."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe

SEVERE = {"serious", "critical"}
# What the reviewer found (issue 40), whatever impact axe gives it: an unlabelled or
# unseen tab stop, empty column headers, a heading jump, no way past the navigation.
ALSO = {"label", "empty-table-header", "heading-order", "bypass", "aria-hidden-focus"}


def problems(page: Any) -> list[str]:
    """axe-core's violations on the page as it is now that matter here, one line each."""
    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes'][:5]]}"
        for v in found
        if v["impact"] in SEVERE or v["id"] in ALSO
    ]
