from __future__ import annotations

from django.urls import path

from memories import views

app_name = "memories"
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("memories/<int:memory_id>/", views.memory_detail, name="memory"),
    path("memories/<int:memory_id>/edit/", views.memory_edit, name="edit"),
    path("memories/<int:memory_id>/status/", views.memory_status, name="status"),
    path("memories/<int:memory_id>/reverse/", views.memory_reverse, name="reverse"),
    path("memories/<int:memory_id>/delete/", views.memory_delete, name="delete"),
    path("memories/<int:memory_id>/decision/", views.decide, name="decide"),
    path("review/memories/", views.review, name="review"),
]
