"""`platform_sdk.upload_wad(path)`: your own Doom maps on the platform (`POST /v0/doom/wads`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from platform_contracts.limits import MAX_WAD_BYTES
from platform_contracts.tracing import inject_dict

from platform_sdk import errors
from platform_sdk.client.rest import error_from_response
from platform_sdk.client.settings import resolve_token, resolve_url

CHUNK = 1 << 20


def upload_wad(path: str | os.PathLike[str], url: str | None = None, token: str | None = None,
               name: str | None = None, timeout: float = 120.0) -> dict[str, Any]:
    """Upload a WAD file (at most 20 MB) and return its record: `id` (what `kwargs={"wad": id}`
    takes), `name`, `size`, `sha256`, `kind` and `maps` (what `doom_map` takes). Uploading the
    same file again returns its first record.

        wad = platform_sdk.upload_wad("memory_test.wad")
        env = platform_sdk.connect("freedoom-e1m1", kwargs={"wad": wad["id"], "doom_map": "MAP01"})

    Args:
        path: the WAD file.
        url, token: the platform (default PLATFORM_URL and PLATFORM_TOKEN, as `connect`).
        name: the name it is kept under (default the file's).

    Raises:
        InvalidRequestError: the file is missing, over 20 MB, or not a WAD with a map (the
            platform's message says what is wrong).
        PlatformUnavailableError: the platform cannot be reached.
    """
    file = Path(path)
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise errors.InvalidRequestError(f"cannot upload the WAD {os.fspath(path)!r}: {exc.strerror or exc}") from None
    if size > MAX_WAD_BYTES:
        raise errors.InvalidRequestError(
            f"the WAD {file.name} is {size} bytes: the platform takes at most {MAX_WAD_BYTES // CHUNK} MB ({MAX_WAD_BYTES} bytes)")
    base = resolve_url(url)
    token = resolve_token(token)
    headers = {"Content-Type": "application/octet-stream", "Content-Length": str(size), **inject_dict()}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with httpx.Client(base_url=base, timeout=timeout) as http:
            response = http.post("/v0/doom/wads", params={"name": name or file.name}, headers=headers,
                                 content=_chunks(file))
    except httpx.HTTPError as exc:
        raise errors.PlatformUnavailableError(f"cannot reach the platform at {base}: {exc}") from None
    if response.status_code in (413, 422):  # the file or its name: say so as a bad request
        raise errors.InvalidRequestError(_detail(response), status=response.status_code)
    if response.status_code >= 400:
        raise error_from_response(response)
    record: dict[str, Any] = response.json()
    return record


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    return detail if isinstance(detail, str) else response.text


def _chunks(file: Path) -> Iterator[bytes]:
    with open(file, "rb") as stream:
        while chunk := stream.read(CHUNK):
            yield chunk
