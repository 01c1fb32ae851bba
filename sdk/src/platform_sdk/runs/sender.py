"""The background thread that sends a run to the platform: the run itself first (`POST /v0/runs`
with the client's id, so a retry finds the same run), then its points in batches, then the run's
changes (`PATCH`). While the platform cannot be reached or answers 5xx, everything stays queued
and is tried again with a growing pause (0.5 s doubling to 10 s); a 4xx answer is final and is
reported once."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import httpx

from platform_sdk.runs.points import MAX_POINTS_PER_REQUEST, PointQueue

log = logging.getLogger("platform_sdk.runs")

FIRST_PAUSE_S = 0.5
MAX_PAUSE_S = 10.0


class Retry(Exception):
    """The platform is away or failed this time: try again later."""


class Refused(Exception):
    """The platform refused the request (4xx): trying again would not help."""


def merge_changes(into: dict[str, Any], changes: dict[str, Any]) -> None:
    """Merge a `PATCH` body into another as the API merges them: lists unioned, dicts updated,
    other fields replaced."""
    for key, value in changes.items():
        if isinstance(value, list):
            old = into.get(key, [])
            into[key] = old + [item for item in value if item not in old]
        elif isinstance(value, dict):
            into[key] = {**into.get(key, {}), **value}
        else:
            into[key] = value


class RunSender:
    def __init__(self, run_id: str, url: str, token: str | None, create_body: dict[str, Any], queue: PointQueue,
                 flush_every: float) -> None:
        self.run_id = run_id
        self.url = url
        self.queue = queue
        self.flush_every = flush_every
        self.refused: str | None = None  # why the platform refused the run itself: nothing more is sent
        self._create_body = create_body
        self._created = False
        self._changes: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Condition(self._lock)
        self._stopping = False
        self._stopped = threading.Event()
        self._away_since: float | None = None
        self._pause = FIRST_PAUSE_S
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url, headers=headers, timeout=30.0)
        self._thread = threading.Thread(target=self._loop, name=f"run-sender-{run_id}", daemon=True)
        self._thread.start()

    # -- what the run asks -------------------------------------------------------------------
    def change(self, changes: dict[str, Any]) -> None:
        with self._lock:
            merge_changes(self._changes, changes)
        self._wake.set()

    def nudge(self) -> None:
        """Points were queued: send now when a full batch is waiting."""
        if len(self.queue) >= MAX_POINTS_PER_REQUEST:
            self._wake.set()

    def flush(self, timeout: float) -> bool:
        """Send everything queued; True when all of it was accepted within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        self._wake.set()
        with self._idle:
            while not self._settled():
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return self._settled()
                self._idle.wait(min(left, 0.2))
                self._wake.set()
        return True

    def stop(self, timeout: float) -> bool:
        sent = self.flush(timeout)
        self._stopping = True
        self._stopped.set()
        self._wake.set()
        self._thread.join(timeout=5)
        self._http.close()
        return sent

    # -- the thread ----------------------------------------------------------------------------
    def _settled(self) -> bool:
        return self.refused is not None or (self._created and not len(self.queue) and not self._changes)

    def _loop(self) -> None:
        while not self._stopping:
            self._wake.wait(self.flush_every)
            self._wake.clear()
            if self._stopping:
                break
            try:
                self._send_all()
            except Retry as exc:
                self._platform_away(str(exc))
                self._stopped.wait(self._pause)  # a flush() does not shorten the pause between tries
                self._pause = min(self._pause * 2, MAX_PAUSE_S)
                self._wake.set()
                continue
            except Exception as exc:  # noqa: BLE001 - never let the logger's thread die silently
                log.warning("run %s: sending failed: %s: %s", self.run_id, type(exc).__name__, exc)
            with self._idle:
                self._idle.notify_all()

    def _send_all(self) -> None:
        if self.refused is not None:
            return
        if not self._created:
            try:
                self._request("POST", "/v0/runs", self._create_body)
            except Refused as exc:
                self.refused = str(exc)
                log.warning("run %s: the platform refused the run, nothing of it is sent: %s", self.run_id, exc)
                return
            self._created = True
        while True:
            batch = self.queue.peek()
            if not batch:
                break
            try:
                self._request("POST", f"/v0/runs/{self.run_id}/metrics",
                              {"points": [point.as_json() for point in batch]})
            except Refused as exc:
                log.warning("run %s: the platform refused %d points, they are dropped: %s", self.run_id,
                            len(batch), exc)
            self.queue.accepted(batch)
        with self._lock:
            changes, self._changes = self._changes, {}
        if changes:
            try:
                self._request("PATCH", f"/v0/runs/{self.run_id}", changes)
            except Retry:
                with self._lock:
                    merge_changes(changes, self._changes)
                    self._changes = changes
                raise
            except Refused as exc:
                log.warning("run %s: the platform refused the run's changes %s: %s", self.run_id, sorted(changes), exc)
        if self._away_since is not None:
            log.warning("run %s: the platform at %s is back after %.0f s; everything logged meanwhile is sent",
                        self.run_id, self.url, time.monotonic() - self._away_since)
            self._away_since = None
        self._pause = FIRST_PAUSE_S

    def _request(self, method: str, path: str, body: Any) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise Retry(f"cannot reach the platform at {self.url}: {exc}") from None
        if response.status_code >= 500 or response.status_code == 429:
            raise Retry(f"{method} {path} answered {response.status_code}")
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise Refused(f"{method} {path} answered {response.status_code}: {detail}")
        return response.json() if response.content else None

    def _platform_away(self, why: str) -> None:
        if self._away_since is None:
            self._away_since = time.monotonic()
            log.warning("run %s: %s; the run's points are kept and sent when it is back", self.run_id, why)
