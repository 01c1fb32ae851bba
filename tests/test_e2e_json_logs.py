"""PLATFORM_LOG_FORMAT=json across the platform: every service, the launcher's own lines in their
logs and the environment instances write one JSON object per line with the fields of
docs/observability.md ("Logs"); a recorded session's id is a field of the lines about it; uvicorn's
access lines are JSON, tokens redacted. A bad value stops every service at start with one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import httpx
import platform_sdk
import pytest
from platform_local import SERVICES
from platform_testing.platform import clean_env, running_platform
from platform_testing.waiting import wait_for

FIELDS = {"time", "level", "service", "logger", "message"}
LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
A_TOKEN = "tok-" + "7" * 40


def json_lines(path: Path) -> list[dict[str, str]]:
    """Every line of `path`, each parsed as one JSON object with the fields every line has."""
    lines = []
    for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        try:
            line = json.loads(text)
        except ValueError:
            raise AssertionError(f"{path.name}:{number} is not JSON: {text!r}") from None
        assert isinstance(line, dict), f"{path.name}:{number}: {text!r}"
        assert FIELDS <= set(line), f"{path.name}:{number} lacks {FIELDS - set(line)}: {text!r}"
        assert line["level"] in LEVELS, f"{path.name}:{number}: {text!r}"
        assert datetime.fromisoformat(line["time"]).utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        lines.append(line)
    assert lines, f"{path} is empty"
    return lines


def test_every_line_of_every_log_is_json_with_its_fields(tmp_path: Path) -> None:
    settings = {"PLATFORM_LOG_FORMAT": "json", "PLATFORM_ACCESS_LOG": "true"}
    with running_platform(tmp_path, extra_env=settings) as stack:
        with platform_sdk.connect("cartpole", url=stack.url, record=True) as env:
            session_id = env.session_id
            env.reset(seed=1)
            for _ in range(5):
                env.step(env.action_space.sample())
        meta = stack.recordings / session_id / "meta.json"
        wait_for(lambda: meta.exists() and json.loads(meta.read_text()).get("status") == "closed",
                 what=f"recording {meta} closed")
        assert httpx.get(f"{stack.url}/v0/envs", params={"token": A_TOKEN}).status_code == 200
        wait_for(lambda: "uvicorn.access" in stack.log("gateway"), what="the gateway's access line")
    logs = {path.stem: json_lines(path) for path in stack.logs_dir.glob("*.log")}
    assert set(logs) == {"nats", *SERVICES}
    for name, lines in logs.items():
        assert {line["service"] for line in lines} == {name}, name
        if name != "nats":  # nats-server's own format, wrapped by the launcher
            said = [line for line in lines if line["logger"] != "platform_local"]
            assert said and [line for line in said if line["logger"] == "output"] == [], \
                f"{name} printed lines outside its logging: {[line['message'] for line in said if line['logger'] == 'output']}"
    instance_logs = sorted((stack.data_dir / "envhost").rglob("*.log"))
    assert f"{session_id}.log" in {path.name for path in instance_logs}
    for path in instance_logs:
        lines = json_lines(path)
        assert {line["service"] for line in lines} == {"instance"}
        assert any(line["message"].startswith("READY ") for line in lines)

    for name in ("broker", "envhost", "recorder"):  # the lines about the session name it as a field
        about = [line for line in logs[name] if line.get("session_id") == session_id]
        assert about, f"no {name} line has session_id {session_id}"
        assert all(session_id in line["message"] for line in about)
    starting = next(line for line in logs["broker"]
                    if line.get("session_id") == session_id and "starting on env host" in line["message"])
    assert re.fullmatch(r"[0-9a-f]{32}", starting["trace_id"]) and re.fullmatch(r"[0-9a-f]{16}", starting["span_id"])
    assert starting["trace_id"] != "0" * 32

    access = [line for line in logs["gateway"] if line["logger"] == "uvicorn.access"]
    assert any("/v0/envs?token=*** " in line["message"] for line in access), access
    everything = "".join(path.read_text() for path in [*stack.logs_dir.glob("*.log"), *instance_logs])
    assert A_TOKEN not in everything


@pytest.mark.parametrize("name", [*SERVICES, "sdk"])
def test_a_bad_log_format_stops_each_service_at_start_with_one_line(name: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", f"platform_{name}"]
    if name == "sdk":  # an environment instance
        command += ["--gym-id", "CartPole-v1", "--listen", f"unix:{tmp_path}/x.sock"]
    environ = {**clean_env(), "PLATFORM_LOG_FORMAT": "yaml", "PLATFORM_NATS_URL": "nats://127.0.0.1:1",
               "PLATFORM_RECORDINGS": str(tmp_path / "rec"), "PLATFORM_DATABASE_URL": f"sqlite:///{tmp_path}/db"}
    done = subprocess.run(command, env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "PLATFORM_LOG_FORMAT" in lines[0], done.stderr
    assert ("'text' or 'json'" in lines[0]) or ("text, json" in lines[0]), lines[0]
    assert "Traceback" not in done.stderr + done.stdout
