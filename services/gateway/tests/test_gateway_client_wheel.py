"""The client wheel (`GET /v0/wheels/platform-sdk`, platform_gateway.client_wheel): its name, its
metadata, a RECORD that verifies, no compiled files, the token, and a client that imports and
runs its tracing without grpc, OpenTelemetry or simplejpeg, and its WebSocket client without
websockets."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import re
import subprocess
import sys
import textwrap
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from platform_gateway.client_wheel import ClientWheelError, build_client_wheel, client_wheel, package_files

TOKEN = "wheel-token"
VERSION = importlib.metadata.version("platform-sdk")
FILENAME = f"platform_sdk-{VERSION}-py3-none-any.whl"
DIST_INFO = f"platform_sdk-{VERSION}.dist-info"
CLIENT_BASE = {"numpy", "gymnasium", "httpx", "protobuf"}  # the agents guide's step 1: these, nothing else


def _metadata(archive: zipfile.ZipFile):
    return Parser().parsestr(archive.read(f"{DIST_INFO}/METADATA").decode())


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement)[0].lower().replace("_", "-")


@pytest.fixture(scope="module")
def wheel():
    return build_client_wheel()


@pytest.fixture(scope="module")
def archive(wheel):
    return zipfile.ZipFile(io.BytesIO(wheel.data))


def test_the_wheel_is_named_after_the_installed_version(wheel, archive) -> None:
    assert wheel.filename == FILENAME
    assert archive.testzip() is None
    wheel_file = archive.read(f"{DIST_INFO}/WHEEL").decode()
    assert "Wheel-Version: 1.0" in wheel_file and "Root-Is-Purelib: true" in wheel_file
    assert "Tag: py3-none-any" in wheel_file.splitlines()
    metadata = _metadata(archive)
    assert (metadata["Name"], metadata["Version"]) == ("platform-sdk", VERSION)
    assert metadata["Requires-Python"] == importlib.metadata.metadata("platform-sdk")["Requires-Python"]


def test_the_base_needs_only_the_client_libraries_and_the_rest_are_extras(archive) -> None:
    metadata = _metadata(archive)
    requires = metadata.get_all("Requires-Dist")
    base = [r for r in requires if ";" not in r]
    assert {_name(r) for r in base} == CLIENT_BASE
    assert not any(_name(r) == "platform-contracts" for r in requires)  # its code is in the wheel
    # the environment-server side is not in the wheel, and neither is its extra
    assert set(metadata.get_all("Provides-Extra")) == {"frames", "tracing", "inspect"}
    assert not [r for r in requires if "server" in r or _name(r) in {"grpcio", "platform-envs"}]
    assert {_name(r) for r in requires if "extra == 'frames'" in r} == {"simplejpeg"}
    assert "opentelemetry-api" in {_name(r) for r in requires if "extra == 'tracing'" in r}
    # the platform's environments as Inspect tasks: Inspect, pinned, only with the extra
    assert [r.split(";")[0].strip() for r in requires if "extra == 'inspect'" in r] == ["inspect-ai==0.3.285"]
    # protobuf's floor is at least the version the bundled generated code was made by.
    generated = archive.read("simulusion/env/v1/environment_pb2.py").decode()
    gencode = re.search(r"# Protobuf Python Version: (\S+)", generated)[1]
    protobuf = next(r for r in base if _name(r) == "protobuf")
    assert f">={gencode}" in protobuf


def test_the_record_lists_every_file_with_its_hash_and_size(archive) -> None:
    rows = list(csv.reader(io.StringIO(archive.read(f"{DIST_INFO}/RECORD").decode())))
    assert [row[0] for row in rows] == archive.namelist()
    assert rows[-1] == [f"{DIST_INFO}/RECORD", "", ""]
    for name, digest, size in rows[:-1]:
        data = archive.read(name)
        algorithm, _, value = digest.partition("=")
        assert algorithm == "sha256"
        assert value == base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), name
        assert int(size) == len(data), name


def test_the_wheel_holds_the_three_packages_without_compiled_files(archive) -> None:
    names = archive.namelist()
    for expected in ("platform_sdk/__init__.py", "platform_sdk/client/remote_env.py", "platform_sdk/py.typed",
                     "platform_contracts/tracing.py", "simulusion/env/v1/environment_pb2.py",
                     "simulusion/env/v1/environment_pb2.pyi"):
        assert expected in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    # the client and the agents only: no environment server, platform-check, launcher or environments
    for left_out in ("platform_sdk/server/", "platform_sdk/check/", "platform_sdk/launch/", "platform_sdk/menagerie/",
                     "platform_sdk/__main__.py", "platform_envs/"):
        assert not [n for n in names if n.startswith(left_out)], left_out
    assert "platform_sdk/agents/run.py" in names and "platform_sdk/recordings/life.py" in names
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"platform_sdk", "platform_contracts", "simulusion", DIST_INFO}
    # The same files as installed: platform_sdk's source, byte for byte.
    installed = dict(package_files("platform_sdk"))
    assert archive.read("platform_sdk/__init__.py") == installed["platform_sdk/__init__.py"].read_bytes()


def test_the_console_scripts_and_the_inspect_tasks_come_with_it(archive) -> None:
    """The agents' commands; platform-check and platform-env-server are the server side's. The
    `inspect_ai` entry point is how Inspect finds the platform's tasks (platform_sdk/episodes)."""
    entry_points = archive.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert entry_points == ("[console_scripts]\nplatform-agent = platform_sdk.agents.run:main\n"
                            "platform-compare = platform_sdk.agents.compare:main\n\n"
                            "[inspect_ai]\nplatform_sdk = platform_sdk.inspect_tasks.registry\n\n")
    assert "platform_sdk/inspect_tasks/registry.py" in archive.namelist()


def test_a_build_is_the_same_bytes_and_made_once_per_process(wheel) -> None:
    assert build_client_wheel().data == wheel.data
    assert client_wheel() is client_wheel()


def test_a_missing_package_is_named() -> None:
    with pytest.raises(ClientWheelError, match="no_such_package_here is not installed"):
        list(package_files("no_such_package_here"))


def test_the_client_runs_from_the_wheel_without_the_server_libraries(wheel, tmp_path: Path) -> None:
    """The wheel's files alone (first on the path), with grpc, opentelemetry, simplejpeg and
    websockets made unimportable: the client modules (and the agents') import, tracing gives empty
    carriers and no-op spans, a JPEG that must be decoded names the `frames` extra, and the
    session stream's WebSocket client talks to a server."""
    zipfile.ZipFile(io.BytesIO(wheel.data)).extractall(tmp_path / "site")
    script = textwrap.dedent("""
        import importlib.abc, sys

        class Absent(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("grpc", "opentelemetry", "simplejpeg", "websockets", "wsproto"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Absent())
        import platform_sdk
        assert platform_sdk.__file__.startswith(sys.argv[1]), platform_sdk.__file__
        import platform_sdk.client.remote_env, platform_sdk.client.vector_env, platform_sdk.client.resume
        import platform_sdk.recordings
        import platform_sdk.agents.run, platform_sdk.agents.loop, platform_sdk.agents.builtin
        import platform_sdk.agents.compare
        from platform_contracts import tracing
        assert not tracing.OPENTELEMETRY and not tracing.tracing_on() and not tracing.current_span_valid()
        assert tracing.inject_dict() == {} and tracing.inject_dict({"a": "b"}) == {"a": "b"}
        assert tracing.grpc_metadata([("k", "v")]) == [("k", "v")]
        with tracing.get_tracer("x").start_as_current_span("y") as span:
            assert not span.get_span_context().is_valid
        from platform_sdk.client.results import decode_jpeg
        try:
            decode_jpeg(b"\\xff\\xd8")
        except ModuleNotFoundError as exc:
            print(exc)
        import platform_sdk.client.stream, socket, threading, base64, hashlib
        from platform_sdk.client.ws_connection import BlockingWebSocket
        listener = socket.create_server(("127.0.0.1", 0))
        def serve():  # a bare WebSocket echo of one small frame
            conn = listener.accept()[0]
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                head += conn.recv(4096)
            key = next(l.split(b":", 1)[1].strip() for l in head.split(b"\\r\\n") if l.lower().startswith(b"sec-websocket-key:"))
            accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                         b"Sec-WebSocket-Accept: " + accept + b"\\r\\n\\r\\n")
            frame = conn.recv(4096)
            mask, body = frame[2:6], frame[6:]
            conn.sendall(bytes((0x82, len(body))) + bytes(b ^ mask[i % 4] for i, b in enumerate(body)))
            conn.recv(4096)
            conn.close()
        threading.Thread(target=serve, daemon=True).start()
        ws = BlockingWebSocket(f"ws://127.0.0.1:{listener.getsockname()[1]}/")
        ws.send(b"over the wheel's own client")
        assert ws.recv(10) == b"over the wheel's own client"
        ws.close()
        absent = ("grpc", "opentelemetry", "simplejpeg", "websockets", "wsproto")
        assert not any(m.split(".")[0] in absent for m in sys.modules)
    """)
    site = str(tmp_path / "site")
    done = subprocess.run([sys.executable, "-c", script, site], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": site, "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr
    assert "pip install 'platform_sdk[frames]'" in done.stdout


async def test_the_route_serves_the_wheel_with_its_filename(gateway, wheel) -> None:
    answer = await gateway.http.get("/v0/wheels/platform-sdk")
    assert answer.status_code == 200
    assert answer.headers["content-disposition"] == f'attachment; filename="{FILENAME}"'
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.content == wheel.data
    assert answer.headers["etag"] == f'"{hashlib.sha256(wheel.data).hexdigest()}"'


async def test_the_route_needs_the_token_when_the_platform_has_one(start_gateway) -> None:
    gateway = await start_gateway(api_token=TOKEN)
    missing = await gateway.http.get("/v0/wheels/platform-sdk")
    assert missing.status_code == 401
    assert "Authorization: Bearer" in missing.json()["detail"]
    wrong = await gateway.http.get("/v0/wheels/platform-sdk", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["detail"] == "the API token is not valid"
    good = await gateway.http.get("/v0/wheels/platform-sdk", headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 200 and good.content[:2] == b"PK"
    operation = (await gateway.http.get("/openapi.json")).json()["paths"]["/v0/wheels/platform-sdk"]["get"]
    assert operation["security"] == [{"HTTPBearer": []}] and "401" in operation["responses"]
