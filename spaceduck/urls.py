from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from spaceduck.ops import activity_views, dashboard
from spaceduck.ops.api import api

# The admin's ModelAdmins register themselves here, not at start-up (settings.py,
# INSTALLED_APPS, says why).
admin.autodiscover()

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("notes/", include("notes.urls")),
    path("nav/counts/", dashboard.nav_counts, name="nav-counts"),
    path("people/", dashboard.people_search, name="people"),
    path("people/export/", dashboard.person_export, name="people-export"),
    path("people/erase/", dashboard.person_erase, name="people-erase"),
    path("activity/", activity_views.activity, name="activity"),
    path(
        "activity/activity.csv", activity_views.activity_export, {"fmt": "csv"}, name="activity-csv"
    ),
    path(
        "activity/activity.jsonl",
        activity_views.activity_export,
        {"fmt": "jsonl"},
        name="activity-jsonl",
    ),
    # Browsers ask for it where a page names no icon (the API's JSON, a file download).
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("", include("memories.urls")),
]

# Styled pages with the navigation (JSON under /api/): spaceduck.core.pages.
handler400 = "spaceduck.core.pages.bad_request"
handler403 = "spaceduck.core.pages.permission_denied"
handler404 = "spaceduck.core.pages.page_not_found"
handler500 = "spaceduck.core.pages.server_error"
