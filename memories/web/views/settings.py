"""Settings > Memory: the runtime settings (spaceduck.core.runtime) shown with where each
value comes from, changed by staff through ``runtime.settings_update`` (recorded), in effect
everywhere within ``SETTINGS_REFRESH_SECONDS`` and without a restart."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from memories.upkeep import reembed
from spaceduck.core import runtime, webhooks
from spaceduck.core.errors import ServiceError
from spaceduck.core.limits import CountedForm
from spaceduck.core.pages import error_response
from spaceduck.core.providers import get_embedder
from spaceduck.models import VectorIndexState

PAGE = "memories/settings.html"
HISTORY = 50
WEBHOOK_DELIVERIES = 10


class MemorySettingsForm(forms.Form):
    memory_enabled = forms.BooleanField(required=False, label="Memory on")
    recall_semantic = forms.BooleanField(required=False, label="Semantic recall on")
    extraction_retries = forms.IntegerField(min_value=0, max_value=20)
    task_max_memory_writes = forms.IntegerField(min_value=0, max_value=10_000)

    def changed(self) -> dict[str, object]:
        """The values that differ from the ones in effect: only those are saved, so saving
        the page unchanged pins nothing against a later change of the environment."""
        return {
            key: value
            for key, value in self.cleaned_data.items()
            if value != runtime.current(key).value
        }


class EmbedderForm(CountedForm):
    provider = forms.ChoiceField(choices=[(p, p) for p in django_settings.EMBEDDING_PROVIDERS])
    model = forms.CharField(required=False, max_length=200)
    dimensions = forms.IntegerField(required=False, min_value=1, max_value=8192)


def _embedder_initial() -> dict[str, Any]:
    choice = runtime.embedding_choice()
    return {**choice, "model": choice["model"] or ""}


def _on_form() -> list[runtime.Value]:
    return [value for value in runtime.all_values() if value.spec.on_form]


def _initial() -> dict[str, Any]:
    return {value.spec.key: value.value for value in _on_form()}


def _context(form: MemorySettingsForm, embedder_form: EmbedderForm | None = None) -> dict[str, Any]:
    return {
        "form": form,
        "embedder_form": embedder_form or EmbedderForm(initial=_embedder_initial()),
        "embedder": get_embedder().fingerprint,
        "embedder_sources": [v for v in runtime.all_values() if not v.spec.on_form],
        "job": reembed.latest_job(),
        "rows": [(value, form[value.spec.key]) for value in _on_form()],
        "history": runtime.change_history(HISTORY),
        "index": VectorIndexState.objects.first(),
        "refresh": django_settings.SETTINGS_REFRESH_SECONDS,
        **_webhook_context(),
    }


def _webhook_context() -> dict[str, Any]:
    url = django_settings.WEBHOOK_URL
    return {
        "webhook_url": webhooks.shown_url(url) if url else "",
        "webhook_signed": bool(django_settings.WEBHOOK_SECRET),
        "webhook_deliveries": webhooks.recent(WEBHOOK_DELIVERIES),
    }


@staff_member_required
@require_http_methods(["GET", "POST"])
def memory_settings(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        context = _context(MemorySettingsForm(initial=_initial()))
        if request.htmx:  # type: ignore[attr-defined]
            return render(request, PAGE + "#reembed-progress", context)  # the polling bar
        return render(request, PAGE, context)
    actor = f"staff:{request.user.get_username()}"
    if request.POST.get("form") == "embedder":
        return _switch_embedder(request, actor)
    if request.POST.get("form") == "webhook-test":
        return _test_webhook(request, actor)
    reset = request.POST.get("reset", "")
    if reset:
        return _apply(request, MemorySettingsForm(initial=_initial()), {}, (reset,), actor)
    form = MemorySettingsForm(request.POST)
    if not form.is_valid():
        return render(request, PAGE, _context(form), status=400)
    return _apply(request, form, form.changed(), (), actor)


def _apply(
    request: HttpRequest,
    form: MemorySettingsForm,
    values: dict[str, object],
    reset: tuple[str, ...],
    actor: str,
) -> HttpResponse:
    try:
        changes = runtime.settings_update(values=values, reset=reset, actor=actor)
    except ServiceError as error:
        if form.is_bound:
            form.add_error(None, str(error))
        else:  # "Use the default" of a setting that does not exist
            messages.error(request, str(error))
        return render(request, PAGE, _context(form), status=error.status_code)
    labels = {spec.key: spec.label for spec in runtime.SPECS}
    said = ", ".join(f"{labels[c.key]}: {c.old!r} -> {c.new!r}" for c in changes)
    messages.success(request, f"Saved. {said}." if changes else "Nothing changed.")
    return HttpResponseRedirect(reverse("memories:settings"))


def _switch_embedder(request: HttpRequest, actor: str) -> HttpResponse:
    """Start re-embedding every memory with another embedder; the page shows its progress."""
    form = EmbedderForm(request.POST)
    settings_form = MemorySettingsForm(initial=_initial())
    if not form.is_valid():
        return render(request, PAGE, _context(settings_form, form), status=400)
    try:
        job = reembed.reembed_start(
            provider=form.cleaned_data["provider"],
            model=form.cleaned_data["model"],
            dimensions=form.cleaned_data["dimensions"],
            actor=actor,
        )
    except ServiceError as error:
        form.add_error(None, str(error))
        return render(request, PAGE, _context(settings_form, form), status=error.status_code)
    messages.success(
        request,
        f"Re-embedding every memory with {job.provider}/{job.model or 'default'}/"
        f"{job.dimensions}d; the current index serves until the switch.",
    )
    return HttpResponseRedirect(reverse("memories:settings"))


def _test_webhook(request: HttpRequest, actor: str) -> HttpResponse:
    """The *Send a test webhook* button: one attempt now (spaceduck.core.webhooks.send_test),
    its answer shown; htmx gets the Webhooks section back, a plain form the page."""
    if not webhooks.enabled():
        return error_response(
            request, "No webhook is configured: set SPACEDUCK_WEBHOOK_URL and restart.", 409
        )
    record = webhooks.send_test(actor)
    if request.htmx:  # type: ignore[attr-defined]
        context = {**_webhook_context(), "webhook_result": record}
        return render(request, PAGE + "#webhooks", context)
    if record.ok:
        messages.success(request, f"Test webhook delivered: HTTP {record.status_code}.")
    else:
        messages.error(request, f"Test webhook failed: {record.error}")
    return HttpResponseRedirect(reverse("memories:settings"))
