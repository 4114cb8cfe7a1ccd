"""Domain errors raised by services; each front end maps them once.

The JSON API turns them into 4xx responses with ``{"detail": message}``
(spaceduck.api), the CLI into one-line ``CommandError``s. Messages are written
for the caller: they say what was wrong and what is accepted.
"""

from __future__ import annotations


class ServiceError(ValueError):
    status_code = 400


class InvalidInput(ServiceError):
    status_code = 422


class NotFound(ServiceError):
    status_code = 404


class PermissionDenied(ServiceError):
    status_code = 403


class Conflict(ServiceError):
    status_code = 409
