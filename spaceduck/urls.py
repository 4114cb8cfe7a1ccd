from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from spaceduck.ops import dashboard
from spaceduck.ops.api import api

# The admin's ModelAdmins register themselves here, not at start-up (settings.py,
# INSTALLED_APPS, says why).
admin.autodiscover()

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("notes/", include("notes.urls")),
    path("people/", dashboard.people_search, name="people"),
    path("people/export/", dashboard.person_export, name="people-export"),
    path("people/erase/", dashboard.person_erase, name="people-erase"),
    path("", include("memories.urls")),
]

# Styled pages with the navigation (JSON under /api/): spaceduck.core.pages.
handler400 = "spaceduck.core.pages.bad_request"
handler403 = "spaceduck.core.pages.permission_denied"
handler404 = "spaceduck.core.pages.page_not_found"
handler500 = "spaceduck.core.pages.server_error"
