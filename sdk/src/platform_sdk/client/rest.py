"""The REST calls the SDK makes outside the step path: create, get and close sessions."""

from __future__ import annotations

from typing import Any

import httpx
from platform_contracts.tracing import inject_dict

from platform_sdk import errors


class RestClient:
    def __init__(self, url: str, token: str | None, timeout: float = 120.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, json: Any = None) -> Any:
        try:
            response = self._http.request(method, path, json=json, headers=inject_dict())
        except httpx.HTTPError as exc:
            raise errors.PlatformUnavailableError(f"cannot reach the platform at {self.url}: {exc}") from None
        if response.status_code >= 400:
            raise error_from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def create_session(
        self, env_id: str, kwargs: dict[str, Any] | None, record: bool, jpeg_quality: int | None = None,
        record_frames: bool = False, num_envs: int | None = None, *, life: str | None = None,
        frame_every: int | None = None, max_frames: int | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"env_id": env_id, "kwargs": kwargs or {}, "record": record}
        if record_frames:
            body["record_frames"] = True
        for name, value in (("life", life), ("frame_every", frame_every), ("max_frames", max_frames)):
            if value is not None:
                body[name] = value
        if num_envs is not None:
            body["num_envs"] = num_envs
        if jpeg_quality is not None:
            body["jpeg_quality"] = jpeg_quality
        return self.request("POST", "/v0/sessions", body)

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
    detail = body.get("detail", body) if isinstance(body, dict) else body
    message = detail if isinstance(detail, str) else str(detail)
    status = response.status_code
    if status == 404:
        return errors.SessionNotFoundError(message, status=status)
    if status == 410:
        tail = body.get("log_tail", "") if isinstance(body, dict) else ""
        if tail:
            return errors.EnvironmentCrashedError(message, log_tail=tail, status=status)
        return errors.SessionClosedError(message, status=status)
    if status == 422:
        return errors.InvalidActionError(message, status=status)
    if status in (502, 503, 504):
        return errors.PlatformUnavailableError(message, status=status)
    return errors.PlatformError(f"HTTP {status}: {message}", status=status)
