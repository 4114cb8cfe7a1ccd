"""What a reviewer is told when the write path leaves something waiting for a person
(spaceduck.core.webhooks): a conflict opened, a memory kept as a candidate.

Ids, namespace and where to decide; never the memory's text (the receiver is another
system, and the dashboard shows the text to staff).
"""

from __future__ import annotations

from django.urls import reverse

from memories.models import Conflict, Memory
from spaceduck.core import webhooks


def conflict_opened(conflict: Conflict) -> None:
    if not webhooks.enabled():
        return
    data = {
        "conflict_id": conflict.pk,
        "namespace": conflict.namespace,
        "old_memory_id": conflict.old_id,
        "new_memory_id": conflict.new_id,
        "url": f"{reverse('memories:conflicts')}?namespace={conflict.namespace}",
    }
    webhooks.notify(webhooks.CONFLICT_OPENED, data)


def candidate_waits(memory: Memory) -> None:
    if not webhooks.enabled():
        return
    data = {
        "memory_id": memory.pk,
        "namespace": memory.namespace,
        "kind": memory.kind,
        "confidence": memory.confidence,
        "url": reverse("memories:memory", args=[memory.pk]),
    }
    webhooks.notify(webhooks.MEMORY_CANDIDATE, data)
