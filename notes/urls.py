from __future__ import annotations

from django.urls import path

from notes import views

app_name = "notes"
urlpatterns = [
    path("", views.browse, name="browse"),
    path("review/", views.review, name="review"),
    # Two segments, so no note id can shadow it.
    path("search/enable/", views.enable_search, name="enable_search"),
    path("<str:uid>/", views.note_detail, name="note"),
    path("<str:uid>/decision/", views.decide, name="decide"),
]
