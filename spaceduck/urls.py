from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from spaceduck.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("notes/", include("notes.urls")),
    path("", include("memories.urls")),
]
