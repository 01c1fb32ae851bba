"""The REST calls the SDK makes outside the step path: create, get and close sessions, and read
a session's world changes."""

from __future__ import annotations

from typing import Any

import httpx
from platform_contracts.tracing import inject_dict

from platform_sdk import errors
from platform_sdk.client.error_map import error_from_http


class RestClient:
    def __init__(self, url: str, token: str | None, timeout: float = 120.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, json: Any = None, timeout: float | None = None) -> Any:
        """`timeout`: seconds for this request (default the client's)."""
        try:
            if timeout is None:
                response = self._http.request(method, path, json=json, headers=inject_dict())
            else:
                response = self._http.request(method, path, json=json, headers=inject_dict(), timeout=timeout)
        except httpx.HTTPError as exc:
            raise errors.PlatformUnavailableError(f"cannot reach the platform at {self.url}: {exc}") from None
        if response.status_code >= 400:
            raise error_from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def create_session(self, env_id: str, options: dict[str, Any]) -> dict[str, Any]:
        """POST /v0/sessions: `options` are the body's fields besides `env_id` (None: left out)."""
        body = {"env_id": env_id, **{name: value for name, value in options.items() if value is not None}}
        session: dict[str, Any] = self.request("POST", "/v0/sessions", body)
        return session

    def world_changes(self, session_id: str) -> dict[str, Any]:
        """GET /v0/sessions/{id}/world-changes: {"session_id", "timeline", "applied"}."""
        changes: dict[str, Any] = self.request("GET", f"/v0/sessions/{session_id}/world-changes")
        return changes

    def close_session(self, session_id: str) -> None:
        try:
            self.request("DELETE", f"/v0/sessions/{session_id}")
        except (errors.SessionNotFoundError, errors.SessionClosedError, errors.EnvironmentCrashedError):
            pass


def error_from_response(response: httpx.Response) -> errors.PlatformError:
    try:
        body = response.json()
    except ValueError:
        body = {"detail": response.text}
    return error_from_http(response.status_code, body)
