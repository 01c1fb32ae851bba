"""The SDK's tests: the client, the agents, the environment server and the launcher. The
environment server runs as a real process through `platform_testing.env_server_client`; the
catalog families' own tests are the environments' (libs/environments/tests)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class RunsStandIn:
    """The runs API's routes that `platform_sdk.runs` calls, keeping what they are sent."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self.points: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.unavailable = False  # answer 503 to everything
        self.refuse_points = False  # answer 422 to metrics posts
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _answer(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                stand_in.requests.append((method, self.path))
                if stand_in.unavailable:
                    return self._answer(503, {"detail": "unavailable"})
                parts = self.path.strip("/").split("/")
                if method == "POST" and parts == ["v0", "runs"]:
                    created = body["id"] not in stand_in.runs
                    stand_in.runs.setdefault(body["id"], {"state": "running", "summary": {}}).update(body)
                    return self._answer(201 if created else 200, stand_in.runs[body["id"]])
                run = stand_in.runs.get(parts[2]) if len(parts) > 2 else None
                if run is None:
                    return self._answer(404, {"detail": "no such run"})
                if method == "POST" and parts[3:] == ["metrics"]:
                    if stand_in.refuse_points:
                        return self._answer(422, {"detail": "refused"})
                    for point in body["points"]:
                        stand_in.points[(parts[2], point["name"], point["step"])] = point
                    return self._answer(200, {"accepted": len(body["points"])})
                if method == "PATCH":
                    for key, value in body.items():
                        if isinstance(value, list):
                            run[key] = run.get(key, []) + [v for v in value if v not in run.get(key, [])]
                        elif isinstance(value, dict):
                            run[key] = {**run.get(key, {}), **value}
                        else:
                            run[key] = value
                    return self._answer(200, run)
                return self._answer(405, {"detail": "not here"})

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def series(self, run_id: str, name: str) -> list[tuple[int, float]]:
        return sorted((step, point["value"]) for (run, metric, step), point in self.points.items()
                      if run == run_id and metric == name)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def runs_api() -> Iterator[RunsStandIn]:
    """A stand-in for the platform's runs API (a real HTTP server on a free loopback port) keeping
    runs and points as `/v0/runs` does; `.unavailable` makes it answer 503, `.refuse_points` 422.
    The real API is tested across services (tests/test_e2e_runs.py)."""
    stand_in = RunsStandIn()
    yield stand_in
    stand_in.close()
