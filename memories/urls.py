from __future__ import annotations

from django.urls import path

from memories.web.views import (
    beliefs,
    conflicts,
    context_preview,
    extractions,
    facts,
    memory,
    overview,
    settings,
    threads,
    tokens,
)

app_name = "memories"
urlpatterns = [
    path("", memory.dashboard, name="dashboard"),
    path("memories/<int:memory_id>/", memory.memory_detail, name="memory"),
    path("memories/<int:memory_id>/edit/", memory.memory_edit, name="edit"),
    path("memories/<int:memory_id>/status/", memory.memory_status, name="status"),
    path("memories/<int:memory_id>/reverse/", memory.memory_reverse, name="reverse"),
    path("memories/<int:memory_id>/delete/", memory.memory_delete, name="delete"),
    path(
        "memories/<int:memory_id>/restore-version/",
        memory.memory_restore_version,
        name="restore-version",
    ),
    path("memories/<int:memory_id>/undo-restore/", memory.memory_undo_restore, name="undo-restore"),
    path("beliefs/", beliefs.claim_page, name="beliefs"),
    path("memories/<int:memory_id>/decision/", memory.decide, name="decide"),
    path("review/memories/", memory.review, name="review"),
    path("review/conflicts/", conflicts.inbox, name="conflicts"),
    path("review/conflicts/<int:conflict_id>/undo/", conflicts.undo, name="conflict-undo"),
    path("overview/", overview.overview, name="overview"),
    path("context/", context_preview.context_preview, name="context"),
    path("extractions/", extractions.extraction_list, name="extractions"),
    path("extractions/<int:extraction_id>/", extractions.extraction_detail, name="extraction"),
    path(
        "extractions/<int:extraction_id>/retry/",
        extractions.extraction_retry,
        name="extraction-retry",
    ),
    path("threads/", threads.thread_list, name="threads"),
    path("threads/<path:thread_id>/", threads.thread_detail, name="thread"),
    # Fact keys may contain "/": the namespace and key travel as query/form fields.
    path("facts/", facts.fact_list, name="facts"),
    path("facts/delete/", facts.fact_delete, name="fact-delete"),
    path("facts/edit/", facts.fact_edit, name="fact-edit"),
    path("settings/memory/", settings.memory_settings, name="settings"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<int:token_id>/revoke/", tokens.token_revoke_view, name="token-revoke"),
]
