from __future__ import annotations

from django.urls import path

from notes import views

app_name = "notes"
urlpatterns = [
    path("", views.browse, name="browse"),
    path("review/", views.review, name="review"),
    path("<str:uid>/decision/", views.decide, name="decide"),
]
