from __future__ import annotations

from django.urls import path

from memories import views

app_name = "memories"
urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("memories/<int:memory_id>/decision/", views.decide, name="decide"),
]
