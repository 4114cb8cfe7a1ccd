"""Service-wide tables: API tokens, the vector index's fingerprint, worker heartbeats."""

from __future__ import annotations

import hashlib
import secrets
from typing import ClassVar

from django.db import models
from django.utils import timezone

TOKEN_PREFIX = "sd_"
PERMISSIONS: tuple[str, ...] = ("read", "write", "approve", "admin")


def hash_token(raw: str) -> str:
    # Tokens are 256 random bits, so a fast hash is enough: there is nothing to
    # brute-force, and a slow KDF would cost every API request.
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="First characters, to recognise a token.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    namespaces = models.JSONField(
        default=list, help_text='Grants: exact "user:alice" or a kind wildcard "user:*".'
    )
    permissions = models.JSONField(default=list, help_text="read, write, approve, admin")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="After this the API and MCP refuse the token (401)."
    )
    # Who made and who revoked it: a staff user ("staff:<username>") or "cli".
    created_by = models.CharField(max_length=150, blank=True)
    revoked_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}...)"

    @staticmethod
    def generate_secret() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def state(self) -> str:
        """ "revoked", "expired" or "active": revoked wins, since it is final and says who."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.is_expired else "active"

    @property
    def is_active(self) -> bool:
        return self.state == "active"

    def revoke(self, by: str = "") -> bool:
        """Revoke once: False when it was revoked already (the first time and who stay)."""
        if self.revoked_at is not None:
            return False
        now = timezone.now()
        # Conditional, so two revokes at once record one time and one person.
        done = ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
            revoked_at=now, revoked_by=by
        )
        self.refresh_from_db(fields=["revoked_at", "revoked_by"])
        return bool(done)

    def has_permission(self, permission: str) -> bool:
        return permission in self.permissions or "admin" in self.permissions

    def grants_namespace(self, namespace: str) -> bool:
        kind = namespace.partition(":")[0]
        return any(grant in (namespace, f"{kind}:*", "*") for grant in self.namespaces)


class VectorIndexState(models.Model):
    """What produced the vectors in a vec0 table, and any reindex in progress.

    ``provider``/``model``/``dimensions`` describe the vectors the table holds;
    while a reindex runs, ``target_*`` names the new fingerprint and
    ``resume_after_id`` lets an interrupted run continue where it stopped.
    """

    name = models.CharField(max_length=50, primary_key=True)
    provider = models.CharField(max_length=50)
    model = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    target_provider = models.CharField(max_length=50, blank=True)
    target_model = models.CharField(max_length=200, blank=True)
    target_dimensions = models.PositiveIntegerField(null=True, blank=True)
    resume_after_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name}: {self.provider}/{self.model}/{self.dimensions}d"


class WorkerHeartbeat(models.Model):
    """A background worker (huey consumer) process: alive while ``beat_at`` is recent."""

    worker_id = models.CharField(max_length=255, primary_key=True)  # "<host>:<pid>"
    started_at = models.DateTimeField(default=timezone.now)
    beat_at = models.DateTimeField(default=timezone.now)
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering: ClassVar = ["-beat_at"]

    def __str__(self) -> str:
        return self.worker_id


class RuntimeSetting(models.Model):
    """A memory setting changed from the dashboard; it overrides the environment's default.

    Written only through ``spaceduck.core.runtime.settings_update`` (which records the change);
    every process reads it through ``spaceduck.core.runtime.current``.
    """

    key = models.CharField(max_length=64, primary_key=True)
    value = models.JSONField()
    updated_by = models.CharField(max_length=150)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.key} = {self.value!r}"


class SettingChange(models.Model):
    """Who changed a runtime setting, when, and from what to what (the values in effect);
    ``reset``: the saved value was dropped, so the environment's default applies again."""

    key = models.CharField(max_length=64, db_index=True)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)
    reset = models.BooleanField(default=False)
    changed_by = models.CharField(max_length=150)
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-changed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.key}: {self.old!r} -> {self.new!r} by {self.changed_by}"


class NamespaceErasure(models.Model):
    """A namespace erased on request: who, when and how many rows of each kind went.

    The tombstone keeps no content: only the namespace's name, which says what was
    erased, and counts (``{"memories": 12, "messages": 40, ...}``).
    """

    namespace = models.CharField(max_length=255, db_index=True)
    erased_by = models.CharField(max_length=150)
    erased_at = models.DateTimeField(default=timezone.now)
    counts = models.JSONField(default=dict)

    class Meta:
        ordering: ClassVar = ["-erased_at", "-id"]

    def __str__(self) -> str:
        return f"{self.namespace} erased by {self.erased_by}"


class WebhookDelivery(models.Model):
    """One attempt to deliver a webhook (spaceduck.core.webhooks): what, where, the answer.

    An attempt per row, so a delivery retried three times reads as three rows of one
    ``delivery`` id. Keeps no body: the event and the ids it named are what a person
    needs to see, and the body is signed and sent, not archived. ``url``: where it went,
    without its path or query (``webhooks.shown_url``: they may hold the receiver's key).
    """

    delivery = models.CharField(max_length=32, db_index=True)
    event = models.CharField(max_length=32)
    url = models.CharField(max_length=2000)
    attempt = models.PositiveIntegerField(default=1)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    ok = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField(default=0.0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering: ClassVar = ["-created_at", "-id"]

    def __str__(self) -> str:
        answer = self.status_code or self.error[:40]
        return f"{self.event} #{self.attempt} to {self.url}: {answer}"
