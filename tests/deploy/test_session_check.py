"""The chart's `helm test` check (deploy/helm/simulusion-platform/files/session_check.py, also run
by deploy/kind/e2e.sh) against the real platform as local processes: it creates, steps and closes
a CartPole session through the gateway's REST API, with the admin token as the test pod gets it,
and waits for a recorded session's recording."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helm_tool import CHART
from platform_testing.platform import PlatformStack, running_platform

SESSION_CHECK = CHART / "files" / "session_check.py"
ADMIN_TOKEN = "helm-test-admin-token-0123456789abcdef"


@pytest.fixture(scope="module")
def token_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    env = {"PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN_TOKEN, "PLATFORM_POOLS": ""}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=env) as stack:
        yield stack


def run_check(*args: str, token: str | None = None, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PLATFORM_TOKEN", "GATEWAY_URL")}
    if token is not None:
        env["PLATFORM_TOKEN"] = token
    if url is not None:
        env["GATEWAY_URL"] = url
    return subprocess.run([sys.executable, str(SESSION_CHECK), *args], env=env, capture_output=True, text=True,
                          timeout=240, check=False)


def test_it_creates_steps_and_closes_a_session_with_the_admin_token(token_platform: PlatformStack) -> None:
    done = run_check("--steps", "10", token=ADMIN_TOKEN, url=token_platform.url)
    assert done.returncode == 0, done.stdout + done.stderr
    created, stepped, closed = done.stdout.splitlines()
    session_id = created.split()[2]
    assert created.startswith(f"created session {session_id} on env host ")
    assert stepped.startswith(f"stepped session {session_id} 10 times")
    assert closed == f"closed session {session_id} (closed)"


def test_a_recorded_session_is_listed_among_the_recordings(token_platform: PlatformStack) -> None:
    done = run_check(f"--url={token_platform.url}", "--record", "--steps", "5", token=ADMIN_TOKEN)
    assert done.returncode == 0, done.stdout + done.stderr
    session_id = done.stdout.splitlines()[0].split()[2]
    assert done.stdout.splitlines()[-1] == f"recording of session {session_id} listed"


def test_without_the_token_it_fails_in_one_line_naming_the_call(token_platform: PlatformStack) -> None:
    done = run_check(url=token_platform.url)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("session_check failed: POST /v0/sessions: HTTP 401"), line


def test_without_a_gateway_it_says_what_is_missing(tmp_path: Path) -> None:
    missing = run_check()
    assert missing.returncode == 2
    assert missing.stderr.strip() == "session_check: no gateway URL: pass --url or set GATEWAY_URL"
    nobody = run_check("--url", "http://127.0.0.1:1")
    assert nobody.returncode == 1
    assert nobody.stderr.startswith("session_check failed: GET /healthz: no answer from http://127.0.0.1:1")
