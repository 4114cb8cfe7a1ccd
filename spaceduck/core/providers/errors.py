from __future__ import annotations


class ProviderError(RuntimeError):
    """A provider could not produce a usable answer (network, HTTP error, bad payload).

    Callers treat it as retryable: the task queue retries with backoff and records
    the final failure. It is never turned into an empty result.
    """
