"""`platform_sdk.resume(id)`: a new session already at a saved snapshot's moment."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from platform_sdk import errors
from platform_sdk.client.remote_env import RemoteEnv
from platform_sdk.client.rest import RestClient
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.settings import resolve_token, resolve_url


def saved_snapshot(snapshot_id: str, url: str | None = None, token: str | None = None) -> dict[str, Any]:
    """The description of a saved snapshot (`GET /v0/snapshots/{id}`)."""
    rest = RestClient(resolve_url(url), resolve_token(token))
    try:
        saved: dict[str, Any] = rest.request("GET", f"/v0/snapshots/{quote(snapshot_id, safe='')}")
        return saved
    finally:
        rest.close()


def resume(
    snapshot_id: str,
    url: str | None = None,
    token: str | None = None,
    record: bool = False,
    life: str | None = None,
    **settings: Any,
) -> RemoteEnv:
    """Start a session of the saved snapshot's environment and arguments, at that moment.

    `env.resumed` holds `(observation, info)` there (`info["restore_s"]`: the seconds the
    environment took to load the snapshot, as `restore_saved` says); stepping on gives exactly
    what the original session would have. `life` (with `record`) appends the new session's recording
    to that life, so a life goes on after a crash from its last saved snapshot. `settings` are
    further `connect` arguments (e.g. `jpeg_quality`, `auto_reset`, `max_frames`).

    Raises:
        SessionNotFoundError: no saved snapshot has that id.
    """
    saved = saved_snapshot(snapshot_id, url, token)
    env = RemoteEnv(saved["env_id"], kwargs=saved.get("kwargs") or {},
                    settings=SessionSettings(url=url, token=token, record=record, life=life, **settings))
    try:
        env.resumed = env.restore_saved(snapshot_id)
    except errors.PlatformError:
        env.close()
        raise
    return env
