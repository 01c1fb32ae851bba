"""Playing in the browser at each game's own rate: the Session page's stream, driven as the page
drives it, against the environment's control rate and against the SDK through the same gateway.

For each catalog entry asked for (a representative set by default, `--all` for every one):

- In-process cost: the environment server's own work for one browser step (`EnvInstance.handle`
  of a step that renders its frame, plus the gateway's JPEG encoding of a raw frame), median of
  `--probe-steps` steps in this process. An entry whose cost is under its control period can be
  played at its rate; the target applies to those.
- Browser rate: a WebSocket on `/v0/sessions/{id}/stream` sending steps as the Session page does:
  where it shows the whole observation ("full", small observations) and can encode the action,
  binary `EnvRequest` steps asking for the frame (web/src/api/binarySteps.ts), else JSON `step`
  commands (`frame: true`, observation "none" for pictures and big ones), `auto_reset: true`, paced like its
  `StepPacer` (one step in flight, on a schedule at the control rate, no bursts) and reading every
  answer and its JPEG frame, for `--seconds`. Printed as steps a second against the control rate:
  target 0.95 or better.
- Gateway CPU per step: the gateway process's CPU time over the browser window divided by its
  steps, against the same for the SDK (`connect(..., direct=False)`, so its binary steps pass
  through the same gateway; no frames) stepping the same environment at the same pace for as
  long (both windows carry the gateway's background work alike; its idle CPU is printed too).
  Target: within 2x.

Rounds alternate browser and SDK windows; figures are medians with their range.

    uv run python bench/browser_play_rate.py [--envs cartpole,pong] [--all] [--rounds 3] [--seconds 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bench_platform import add_platform_arguments, platform_url
from proc_cpu import cpu_seconds, process_tree

DEFAULT_ENVS = ("cartpole", "pendulum", "pong", "breakout", "doom-basic", "freedoom-e1m1", "dmc-cheetah-run",
                "halfcheetah", "menagerie-franka-emika-panda-reach")
DEFAULT_CONTROL_RATE = 30.0  # the page's, when an environment reports none (web/src/lib/play/pacer.ts)
FULL_OBSERVATION_LIMIT = 512  # web/src/lib/play/observation.ts
ENCODABLE_DTYPES = {"float64", "float32", "int64", "uint64", "int32", "uint32", "int16", "uint16", "int8", "uint8",
                    "bool"}  # web/src/api/envValues.ts


@dataclass
class Figures:
    env_id: str
    control_rate: float = 0.0
    in_process_s: float = 0.0
    browser_rates: list[float] = field(default_factory=list)
    browser_cpu_ms: list[float] = field(default_factory=list)
    sdk_cpu_ms: list[float] = field(default_factory=list)
    frame_bytes: list[int] = field(default_factory=list)
    binary: bool = False
    error: str = ""

    @property
    def playable(self) -> bool:
        return self.in_process_s < 1.0 / self.control_rate


def spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "n/a"
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def observation_mode(space: dict[str, Any] | None) -> str:
    """The mode the Session page asks for (web/src/lib/play/observation.ts)."""
    if not space:
        return "none"
    if space.get("type") == "box" and space.get("dtype") == "uint8" and len(space.get("shape", [])) >= 2:
        return "none"
    count = _elements(space)
    return "full" if 0 < count <= FULL_OBSERVATION_LIMIT else "none"


def _elements(space: dict[str, Any]) -> int:
    kind = space.get("type")
    if kind == "multi_discrete":
        return len(space.get("nvec", []))
    if kind in ("box", "multi_binary"):
        count = 1
        for size in space.get("shape", []):
            count *= int(size)
        return count
    if kind == "discrete":
        return 1
    if kind == "dict":
        return sum(_elements(sub) for sub in space.get("spaces", {}).values())
    if kind == "tuple":
        return sum(_elements(sub) for sub in space.get("spaces", []))
    return 0


def binary_steps(mode: str, action_space: dict[str, Any] | None) -> bool:
    """Whether the Session page sends its steps as binary messages (sessionPlayer.ts: the whole
    observation shown, and an action space envValues.ts `encodable` says it can encode)."""
    return mode == "full" and _encodable(action_space)


def _encodable(space: dict[str, Any] | None) -> bool:
    kind = (space or {}).get("type")
    if kind == "box":
        return (space or {}).get("dtype") in ENCODABLE_DTYPES
    if kind in ("discrete", "multi_binary"):
        return True
    subs = (space or {}).get("spaces")
    if kind == "dict" and isinstance(subs, dict):
        return all(_encodable(sub) for sub in subs.values())
    if kind == "tuple" and isinstance(subs, list):
        return all(_encodable(sub) for sub in subs)
    return False


def jsonable(action: Any) -> Any:
    import numpy as np

    if isinstance(action, np.ndarray):
        return action.tolist()
    if isinstance(action, np.generic):
        return action.item()
    if isinstance(action, dict):
        return {key: jsonable(value) for key, value in action.items()}
    if isinstance(action, tuple):
        return [jsonable(value) for value in action]
    return action


def in_process_step_s(entry: dict[str, Any], steps: int) -> tuple[float, Any]:
    """Median seconds of one rendered step in this process; returns it and the action space."""
    from platform_contracts.values import value_from_python
    from platform_gateway.json_views import frame_jpeg
    from platform_sdk.server.factory import build_env
    from platform_sdk.server.instance import EnvInstance
    from simulusion.env.v1 import environment_pb2 as env_pb

    env, env_id = build_env(entry.get("gymnasium_id") or "", entry.get("factory") or "",
                            [entry["path"]] if entry.get("path") else [], entry.get("kwargs") or {})
    instance = EnvInstance(env, env_id)
    try:
        reset = env_pb.EnvRequest(id=1)
        reset.reset.seed = 0
        instance.handle(reset)
        times = []
        for index in range(steps + 3):
            request = env_pb.EnvRequest(id=index + 2)
            request.step.action.CopyFrom(value_from_python(env.action_space.sample()))
            request.step.render = True
            request.step.auto_reset = True
            start = time.perf_counter()
            response = instance.handle(request)
            if response.step.HasField("frame") and response.step.frame.encoding != "jpeg":
                frame_jpeg(response.step.frame, response.step.observation)
            if index >= 3:  # the first steps warm caches
                times.append(time.perf_counter() - start)
        return statistics.median(times), env.action_space
    finally:
        instance.close()


def gateway_pid(roots: list[int]) -> int:
    for pid in process_tree(roots):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"platform_gateway" in command:
            return pid
    raise SystemExit("error: no gateway process found under this benchmark's platform (pass no --url)")


class Pacer:
    """The Session page's StepPacer (web/src/lib/play/pacer.ts): steps on a schedule one period
    apart, one in flight; a step more than a period late starts the schedule again."""

    def __init__(self, period: float) -> None:
        self.period = period
        self.due = -1e18

    def wait(self) -> None:
        """Sleep until the next step is due, then count it as sent."""
        now = time.perf_counter()
        if self.due > now:
            time.sleep(self.due - now)
            now = time.perf_counter()
        on_schedule = now - self.due <= self.period
        self.due = (self.due if on_schedule else now) + self.period


def browser_window(ws_url: str, action_space: Any, rate: float, mode: str, binary: bool, seconds: float,
                   figures: Figures, gateway: int) -> None:
    from websockets.sync.client import connect

    period = 1.0 / rate
    with connect(ws_url, max_size=None, open_timeout=30) as socket:
        ident = 1
        socket.send(json.dumps({"id": ident, "op": "reset", "seed": 0, "frame": True, "observation": mode}))
        _answer(socket)
        steps, pacer = 0, Pacer(period)
        cpu_before = cpu_seconds(gateway) or 0.0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            pacer.wait()
            ident += 1
            if binary:
                socket.send(_binary_step(ident, action_space.sample()))
                frame = _binary_answer(socket)
            else:
                socket.send(json.dumps({"id": ident, "op": "step", "action": jsonable(action_space.sample()),
                                        "frame": True, "observation": mode, "auto_reset": True}))
                frame = _answer(socket)
            if frame is not None:
                figures.frame_bytes.append(len(frame))
            steps += 1
        elapsed = time.perf_counter() - start
        cpu = (cpu_seconds(gateway) or 0.0) - cpu_before
    figures.browser_rates.append(steps / elapsed)
    figures.browser_cpu_ms.append(cpu / max(steps, 1) * 1000)


def _binary_step(ident: int, action: Any) -> bytes:
    from platform_contracts.values import value_from_python
    from simulusion.env.v1 import environment_pb2 as env_pb

    request = env_pb.EnvRequest(id=ident)
    request.step.action.CopyFrom(value_from_python(action))
    request.step.render = True
    request.step.auto_reset = True
    return request.SerializeToString()


def _binary_answer(socket: Any) -> bytes | None:
    """Read one binary step's answer as the page does (its observation and info decoded); its JPEG."""
    from platform_contracts.values import json_from_datamap, python_from_value
    from simulusion.env.v1 import environment_pb2 as env_pb

    response = env_pb.EnvResponse.FromString(socket.recv())
    if response.HasField("error"):
        raise RuntimeError(f"step: {response.error.message}")
    python_from_value(response.step.observation)
    json_from_datamap(response.step.info)
    return response.step.frame.data if response.step.frame.encoding == "jpeg" else None


def _answer(socket: Any) -> bytes | None:
    """Read one answer (and the frame it announces); fail on an error answer."""
    answer = json.loads(socket.recv())
    if "error" in answer:
        raise RuntimeError(f"{answer['op']}: {answer['error'].get('detail')}")
    if (answer.get("result") or {}).get("frame"):
        frame = socket.recv()
        assert isinstance(frame, bytes)
        return frame
    return None


def sdk_window(url: str, env_id: str, action_space: Any, rate: float, seconds: float, figures: Figures,
               gateway: int) -> None:
    """The SDK through the gateway, paced like the browser (so both windows carry the gateway's
    background work, its timers and heartbeats, alike)."""
    import platform_sdk

    period = 1.0 / rate
    with platform_sdk.connect(env_id, url=url, direct=False, auto_reset=True) as env:
        env.reset(seed=0)
        for _ in range(5):
            env.step(action_space.sample())
        steps, pacer = 0, Pacer(period)
        cpu_before = cpu_seconds(gateway) or 0.0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            pacer.wait()
            env.step(action_space.sample())
            steps += 1
        cpu = (cpu_seconds(gateway) or 0.0) - cpu_before
    figures.sdk_cpu_ms.append(cpu / max(steps, 1) * 1000)


def idle_cpu_ms_per_s(gateway: int, seconds: float) -> float:
    """The gateway's CPU while no session steps (its timers, heartbeats), in ms a second."""
    before = cpu_seconds(gateway) or 0.0
    time.sleep(seconds)
    return ((cpu_seconds(gateway) or 0.0) - before) / seconds * 1000


def measure(client: httpx.Client, url: str, entry: dict[str, Any], args: argparse.Namespace,
            gateway: int) -> Figures:
    figures = Figures(entry["id"])
    try:
        figures.in_process_s, action_space = in_process_step_s(entry, args.probe_steps)
    except Exception as exc:  # noqa: BLE001 - one line per entry that cannot be measured
        figures.error = f"in-process: {type(exc).__name__}: {exc}"
        return figures
    created = client.post("/v0/sessions", json={"env_id": entry["id"]})
    if created.status_code != 201:
        figures.error = f"create: {created.status_code} {created.text[:200]}"
        return figures
    session = created.json()
    try:
        figures.control_rate = float((session.get("metadata") or {}).get("control_rate") or DEFAULT_CONTROL_RATE)
        mode = observation_mode(session.get("observation_space"))
        binary = binary_steps(mode, session.get("action_space"))
        figures.binary = binary
        ws_url = url.replace("http", "ws", 1) + f"/v0/sessions/{session['id']}/stream"
        for round_index in range(args.rounds):
            order = ("browser", "sdk") if round_index % 2 == 0 else ("sdk", "browser")
            for which in order:
                if which == "browser":
                    browser_window(ws_url, action_space, figures.control_rate, mode, binary, args.seconds, figures,
                                   gateway)
                else:
                    sdk_window(url, entry["id"], action_space, figures.control_rate, args.seconds, figures, gateway)
    except Exception as exc:  # noqa: BLE001
        figures.error = f"{type(exc).__name__}: {exc}"
    finally:
        client.delete(f"/v0/sessions/{session['id']}")
    return figures


def report(figures: Figures) -> None:
    name = f"{figures.env_id:<18}"
    if figures.error:
        print(f"{name} not measured: {figures.error}", flush=True)
        return
    rate_ratios = [rate / figures.control_rate for rate in figures.browser_rates]
    cpu_ratio = statistics.median(figures.browser_cpu_ms) / max(statistics.median(figures.sdk_cpu_ms), 1e-6)
    playable = figures.playable
    met = "met" if statistics.median(rate_ratios) >= 0.95 else "NOT met"
    print(f"{name} control {figures.control_rate:6.2f}/s  in-process {figures.in_process_s * 1000:6.1f} ms "
          f"({'under' if playable else 'OVER'} its period)  browser {spread(figures.browser_rates, 1)}/s = "
          f"{spread(rate_ratios)} of control ({met if playable else 'not a target'})  gateway CPU/step "
          f"browser {spread(figures.browser_cpu_ms)} ms vs SDK {spread(figures.sdk_cpu_ms)} ms = {cpu_ratio:.2f}x  "
          f"frame {statistics.median(figures.frame_bytes or [0]) / 1000:.1f} kB  "
          f"{'binary' if figures.binary else 'text'} steps", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--envs", default=",".join(DEFAULT_ENVS), help="catalog ids, comma-separated")
    parser.add_argument("--all", action="store_true", help="every catalog entry")
    parser.add_argument("--rounds", type=int, default=3, help="browser and SDK windows, alternating")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of each browser window")
    parser.add_argument("--probe-steps", type=int, default=40, help="in-process steps timed per entry")
    args = parser.parse_args()
    if args.url:
        print("error: --url is not supported: the gateway's CPU is read from its process here", file=sys.stderr)
        return 2
    os.environ.setdefault("MENAGERIE_ROOT", str(Path(__file__).resolve().parents[2] / "shared" / "menagerie"))
    with platform_url(None, "browser-play-rate") as url, httpx.Client(base_url=url, timeout=120) as client:
        gateway = gateway_pid([os.getpid()])
        catalog = {entry["id"]: entry for entry in client.get("/v0/envs").json()["data"]}
        wanted = list(catalog) if args.all else [env_id.strip() for env_id in args.envs.split(",") if env_id.strip()]
        unknown = [env_id for env_id in wanted if env_id not in catalog]
        if unknown:
            print(f"error: not in the catalog: {', '.join(unknown)}", file=sys.stderr)
            return 2
        print(f"{len(wanted)} entries, {args.rounds} rounds of {args.seconds:g} s; "
              f"{os.cpu_count()} CPUs, every process of the platform on this machine; gateway idle "
              f"{idle_cpu_ms_per_s(gateway, 5.0):.1f} ms CPU a second", flush=True)
        all_figures = []
        for env_id in wanted:
            all_figures.append(measure(client, url, catalog[env_id], args, gateway))
            report(all_figures[-1])
    measured = [f for f in all_figures if not f.error and f.playable]
    if measured:
        worst = min(measured, key=lambda f: statistics.median(f.browser_rates) / f.control_rate)
        cpu_worst = max(measured, key=lambda f: statistics.median(f.browser_cpu_ms) / max(statistics.median(f.sdk_cpu_ms), 1e-6))
        print(f"worst browser rate among playable entries: {worst.env_id} "
              f"{statistics.median(worst.browser_rates) / worst.control_rate:.2f} of control (target 0.95)")
        print(f"worst gateway CPU ratio: {cpu_worst.env_id} "
              f"{statistics.median(cpu_worst.browser_cpu_ms) / max(statistics.median(cpu_worst.sdk_cpu_ms), 1e-6):.2f}x "
              "(target 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
