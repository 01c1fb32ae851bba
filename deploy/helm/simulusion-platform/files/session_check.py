"""Create, step and close a CartPole session through the gateway's REST API; with --record,
also wait for its recording to be listed. Standard library only: it runs as the chart's
`helm test` pod (in the control plane image), from deploy/kind/e2e.sh on the host, and in the
tests against a local platform.

Usage: python session_check.py [--url URL] [--record] [--steps N]
The URL defaults to $GATEWAY_URL; a token, when the platform asks for one, comes from
$PLATFORM_TOKEN. Prints one line per call; exits 1 with one line naming the failed call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

TIMEOUT_S = 120.0
RECORDING_WAIT_S = 60.0


class CheckFailed(Exception):
    """A call answered otherwise than expected."""


def call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """The JSON answer of one REST call; CheckFailed naming it on an HTTP error or no answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token := os.environ.get("PLATFORM_TOKEN"):
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as exc:
        raise CheckFailed(f"{method} {path}: HTTP {exc.code}: {exc.read().decode(errors='replace')[:300]}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise CheckFailed(f"{method} {path}: no answer from {base}: {exc}") from None
    return json.loads(text) if text else None


def check_session(base: str, record: bool, steps: int) -> str:
    """Run one session end to end and return its id."""
    health = call(base, "GET", "/healthz")
    if health.get("nats") != "connected":
        raise CheckFailed(f"GET /healthz: the gateway does not reach NATS: {health}")
    session = call(base, "POST", "/v0/sessions", {"env_id": "cartpole", "record": record})
    session_id = session["id"]
    print(f"created session {session_id} on env host {session.get('host_id')} ({session['state']})", flush=True)
    try:
        reset = call(base, "POST", f"/v0/sessions/{session_id}/reset", {"seed": 1})
        if len(reset["observation"]) != 4:
            raise CheckFailed(f"reset: a CartPole observation has 4 numbers, not {reset['observation']!r}")
        taken = 0
        for taken in range(1, steps + 1):
            step = call(base, "POST", f"/v0/sessions/{session_id}/step", {"action": taken % 2})
            if step["terminated"] or step["truncated"]:
                break
        print(f"stepped session {session_id} {taken} times, last reward {step['reward']}", flush=True)
    finally:
        closed = call(base, "DELETE", f"/v0/sessions/{session_id}")
        print(f"closed session {session_id} ({closed['state']})", flush=True)
    if record:
        wait_for_recording(base, session_id)
    return session_id


def wait_for_recording(base: str, session_id: str) -> None:
    deadline = time.monotonic() + RECORDING_WAIT_S
    while time.monotonic() < deadline:
        listing = call(base, "GET", f"/v0/recordings?session_id={session_id}")
        if any(item.get("session_id") == session_id for item in listing["data"]):
            print(f"recording of session {session_id} listed", flush=True)
            return
        time.sleep(1.0)
    raise CheckFailed(f"GET /v0/recordings: no recording of session {session_id} after {RECORDING_WAIT_S:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("GATEWAY_URL", ""), help="the gateway ($GATEWAY_URL)")
    parser.add_argument("--record", action="store_true", help="record the session and wait for its recording")
    parser.add_argument("--steps", type=int, default=10, help="steps to take at most (10)")
    args = parser.parse_args(argv)
    if not args.url:
        print("session_check: no gateway URL: pass --url or set GATEWAY_URL", file=sys.stderr)
        return 2
    try:
        check_session(args.url, args.record, max(1, args.steps))
    except CheckFailed as exc:
        print(f"session_check failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
