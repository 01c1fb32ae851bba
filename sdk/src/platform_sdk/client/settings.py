"""Where the client finds the platform: arguments, then PLATFORM_URL / PLATFORM_TOKEN."""

from __future__ import annotations

import os

DEFAULT_URL = "http://127.0.0.1:8000"


def resolve_url(url: str | None) -> str:
    return (url or os.environ.get("PLATFORM_URL") or DEFAULT_URL).rstrip("/")


def resolve_token(token: str | None) -> str | None:
    return token or os.environ.get("PLATFORM_TOKEN") or None
