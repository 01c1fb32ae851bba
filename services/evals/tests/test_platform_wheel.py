"""The machine side's fetch of the platform's SDK wheel (`bootstrap.resolved`), from a real HTTP
server standing for the platform: asked with PLATFORM_TOKEN, kept under the name the platform
gives it in a folder named by its sha256, installed with its `inspect` extra; a refusal ends the
eval with the runner's error line."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from platform_evals.machine_side import bootstrap

WHEEL = b"PK\x05\x06" + b"\x00" * 18  # bytes enough: the fetch does not open it
NAME = "platform_sdk-0.1.0-py3-none-any.whl"


class Platform(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/v0/wheels/platform-sdk" or self.headers.get("Authorization") != "Bearer sim-token":
            self.send_response(401)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Disposition", f'attachment; filename="{NAME}"')
        self.send_header("Content-Length", str(len(WHEEL)))
        self.end_headers()
        self.wfile.write(WHEEL)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def platform_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Platform)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_served_wheel_is_fetched_with_the_token_and_installed_with_its_extra(
        platform_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLATFORM_URL", platform_url + "/")
    monkeypatch.setenv("PLATFORM_TOKEN", "sim-token")
    found = bootstrap.resolved(["inspect-ai==0.3.285", bootstrap.PLATFORM_WHEEL, "openai"])
    kept = tmp_path / ".simulusion/evals/wheels" / hashlib.sha256(WHEEL).hexdigest()[:16] / NAME
    assert found == ["inspect-ai==0.3.285", f"platform-sdk[inspect] @ {kept.as_uri()}", "openai"]
    assert kept.read_bytes() == WHEEL
    assert bootstrap.resolved([bootstrap.PLATFORM_WHEEL]) == found[1:2]  # the same wheel: the same requirement


def test_a_refused_fetch_ends_the_eval_saying_why(platform_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLATFORM_URL", platform_url)
    monkeypatch.setenv("PLATFORM_TOKEN", "wrong")
    with pytest.raises(SystemExit):
        bootstrap.resolved([bootstrap.PLATFORM_WHEEL])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    finished = json.loads(line.removeprefix(bootstrap.MARK))
    assert finished["status"] == "error" and "HTTP Error 401" in finished["error"]
    assert "/v0/wheels/platform-sdk" in finished["error"]
