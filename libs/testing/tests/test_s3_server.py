"""The S3 API server fixture: a real moto server process that answers S3 requests."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

import pytest
from platform_testing.s3_server import S3Server, S3ServerError


def _request(method: str, url: str) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, method=method), timeout=10) as response:
        return response.status, response.read()


def test_the_session_server_answers_s3(s3_server: S3Server, s3_bucket: str) -> None:
    assert _request("PUT", f"{s3_server.url}/{s3_bucket}")[0] == 200
    status, body = _request("GET", f"{s3_server.url}/")
    assert status == 200 and f"<Name>{s3_bucket}</Name>".encode() in body
    env = s3_server.env(s3_bucket)
    assert env["PLATFORM_RECORDINGS"] == f"s3://{s3_bucket}/recordings"
    assert env["PLATFORM_S3_ENDPOINT"] == s3_server.endpoint and env["PLATFORM_S3_SECURE"] == "false"


def test_a_port_in_use_fails_the_start_with_the_log(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = S3Server(port=taken.getsockname()[1], log_path=tmp_path / "moto.log")
        with pytest.raises(S3ServerError):
            server.start(timeout=30)
        server.stop()
    assert server.process is None
