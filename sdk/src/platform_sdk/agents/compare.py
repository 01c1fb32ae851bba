"""`python -m platform_sdk.agents.compare --env ID --agent NAME=module:function ...`: branch
several agents from one moment and measure how each copes with the same world changes.

A session plays `--warmup` steps with a seeded random agent and saves a snapshot; each agent
then plays `--steps` steps in a session resumed from it, one agent at a time. The timeline
(the `world_changes` kwarg) is part of the snapshot, so every agent meets each change at the
same session step. With `--seeds N` this happens for N seeds (`--seed`, `--seed`+1, ...): one
warm-up and snapshot per seed, which every agent starts from, so each seed's surprises are the
same for all agents; each agent's `runs` holds one entry per seed (its own measures and reward
windows), and its top-level measures are the first seed's. The measures (`compare_measures`) and every agent's reward per window go
to the platform (`POST /v0/comparisons`); the command prints the Comparisons page's link and a
JSON summary as its last line.

Exit codes as the run command's: 0 done, 1 a platform error, 2 bad arguments (an environment
without snapshots included), 3 an agent raised, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

from platform_sdk.agents.builtin import RandomAgent
from platform_sdk.agents.compare_measures import AgentTrace, measure
from platform_sdk.agents.compare_options import PROG, parse_args
from platform_sdk.agents.interface import AgentError
from platform_sdk.agents.loading import AgentLoadError, load_agent
from platform_sdk.agents.loop import AgentLoop
from platform_sdk.agents.readout_names import WORK_NAMES


class NoSnapshotsError(ValueError):
    """The environment cannot take snapshots, so agents cannot start from one moment."""


def out(line: str) -> None:
    print(line, flush=True)


def out_err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def warm_up(args: argparse.Namespace, seed: int) -> tuple[dict[str, Any], int]:
    """Plays the warm-up of one seed and saves the snapshot; (the saved snapshot, the session step it is at)."""
    import platform_sdk

    with platform_sdk.connect(args.env, url=args.url, token=args.token, kwargs=args.kwargs, auto_reset=True) as env:
        out(f"warm-up: session {env.session_id} ({args.env}), {args.warmup} random steps (seed {seed})")
        loop = AgentLoop(RandomAgent(seed=seed), [env], seeds=[seed])
        loop.start()
        try:
            env.snapshot()
        except platform_sdk.PlatformError as exc:
            raise NoSnapshotsError(f"{args.env} cannot take snapshots ({_first_line(exc)}), so agents cannot all "
                                   "start from one moment: compare agents on an environment that supports "
                                   "snapshots") from None
        while loop.iterations < args.warmup:
            loop.step()
        loop.close()
        saved = env.save_snapshot(f"compare: after {args.warmup} warm-up steps")
    out(f"saved snapshot {saved['id']} at step {args.warmup}")
    return saved, args.warmup


def play(args: argparse.Namespace, name: str, spec: str, saved: dict[str, Any], first_step: int) -> dict[str, Any]:
    """One agent's run from the snapshot: its document entry (measures included)."""
    import platform_sdk

    agent = load_agent(spec, args.configs.get(name, {}))
    env = platform_sdk.resume(saved["id"], url=args.url, token=args.token, record=args.record,
                              record_frames=args.record, auto_reset=True)
    with env:
        out(f"{name}: session {env.session_id} from snapshot {saved['id']}{', recording' if args.record else ''}")
        assert env.resumed is not None  # resume() sets it
        loop = AgentLoop(agent, [env], starts=[env.resumed])
        loop.start()
        if name in args.loads:
            if not callable(getattr(agent, "load", None)):
                raise AgentError(f"--load {name}=...: {type(agent).__name__} has no load(path) method")
            agent.load(args.loads[name])
        rewards: list[float] = []
        step_success: list[bool | None] = []
        episode_success: list[bool | None] = []
        compute_s: list[float] = []
        work: dict[str, list[float]] = {}
        every = progress_every(args.steps, args.window)
        while loop.iterations < args.steps:
            before = loop.act_seconds
            ended = loop.step()
            compute_s.append(loop.act_seconds - before)
            for work_name, value in loop.step_work[0].items():
                work.setdefault(work_name, []).append(value)
            rewards.append(loop.rewards[0] or 0.0)
            success = loop.step_infos[0].get("is_success")
            step_success.append(None if success is None else bool(success))
            episode_success.extend(record.success for record in ended)
            if loop.iterations % every == 0 and loop.iterations < args.steps:
                recent = rewards[-every:]
                out(f"{name}: {loop.iterations}/{args.steps} steps, {len(episode_success)} episodes, "
                    f"mean reward {sum(recent) / len(recent):.4g} per step over the last {every}")
        loop.finish()
        loop.close()
        applied = [{"at": change.get("at"), "session_step": change.get("session_step")}
                   for change in env.world_changes().get("applied", [])]
        session_id = env.session_id
    trace = AgentTrace(first_step=first_step, rewards=rewards, step_success=step_success,
                       episode_success=episode_success, compute_s=compute_s, work=work)
    measures = measure(trace, args.window, args.world_changes)
    reward_windows = measures.pop("reward_windows")
    entry = {"name": name, "agent": spec, "load": str(args.loads[name]) if name in args.loads else None,
             "session_id": session_id, "recording_id": session_id if args.record else None,
             "steps": len(rewards), "episodes": len(episode_success), "measures": measures,
             "reward_windows": reward_windows, "world_changes_met": applied}
    out(agent_line(entry))
    return entry


def progress_every(steps: int, window: int) -> int:
    """How often an agent's run reports progress: a tenth of its steps, in whole windows (at
    least one)."""
    return max(window, steps // 10 // window * window)


def agent_line(entry: dict[str, Any]) -> str:
    measures = entry["measures"]
    parts = [f"{entry['name']}: {entry['steps']} steps, {entry['episodes']} episodes"]
    if measures.get("success") is not None:
        parts.append(f"success {measures['success']:.2f}")
    for recovery in measures.get("recovery", []):
        if recovery.get("too_close"):
            parts.append(f"change at {recovery['at']}: too close to measure")
        elif recovery.get("recovered"):
            parts.append(f"recovery at {recovery['at']}: {recovery['steps']} steps (worst {recovery['worst']:.4g})")
        else:
            parts.append(f"recovery at {recovery['at']}: not recovered (worst {recovery['worst']:.4g})")
    for retention in measures.get("retention", []):
        if retention.get("retention") is not None:
            parts.append(f"retention at {retention['at']}: {retention['retention']:.3f}")
    if measures.get("compute_s") is not None:
        parts.append(f"compute {measures['compute_s'] * 1000:.3f} ms per decision")
    for work_name in WORK_NAMES:
        if measures.get(work_name) is not None:
            parts.append(f"{work_name} {measures[work_name]:.4g} per decision")
    return ", ".join(parts)


def store(args: argparse.Namespace, document: dict[str, Any]) -> dict[str, Any]:
    """POSTs the comparison; the stored document (with its id)."""
    from platform_sdk.client.rest import RestClient
    from platform_sdk.client.settings import resolve_token, resolve_url

    rest = RestClient(resolve_url(args.url), resolve_token(args.token))
    try:
        stored: dict[str, Any] = rest.request("POST", "/v0/comparisons", json=document)
    finally:
        rest.close()
    return stored


def seeds_of(args: argparse.Namespace) -> list[int]:
    """The seeds the agents run over: `--seed` and the `--seeds` - 1 after it."""
    return [args.seed + i for i in range(args.seeds)]


def with_runs(per_seed: list[dict[str, Any]], seeds: list[int], snapshot_ids: list[str]) -> dict[str, Any]:
    """One agent's document entry from its run of each seed (same order as `seeds`): the first
    run's entry, plus `runs`, each run's seed, snapshot and what it measured."""
    runs = [{"seed": seed, "snapshot_id": snapshot_id,
             **{k: v for k, v in entry.items() if k not in ("name", "agent", "load")}}
            for seed, snapshot_id, entry in zip(seeds, snapshot_ids, per_seed, strict=True)]
    return {**per_seed[0], "runs": runs}


def compare(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    seeds = seeds_of(args)
    snapshot_ids: list[str] = []
    played: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in args.agents}
    first_step = args.warmup
    for seed in seeds:
        saved, first_step = warm_up(args, seed)
        snapshot_ids.append(saved["id"])
        for name, spec in args.agents:
            played[name].append(play(args, name, spec, saved, first_step))
    agents = [with_runs(played[name], seeds, snapshot_ids) for name, _ in args.agents]
    document = {"env": args.env, "kwargs": args.kwargs or {}, "world_changes": args.world_changes,
                "warmup": args.warmup, "steps": args.steps, "window": args.window, "seed": args.seed,
                "seeds": seeds, "snapshot_id": snapshot_ids[0], "first_step": first_step, "agents": agents}
    stored = store(args, document)
    from platform_sdk.client.settings import resolve_url

    link = f"{resolve_url(args.url).rstrip('/')}/comparisons/{stored['id']}"
    out(f"comparison {stored['id']}: {link}")
    return {"comparison_id": stored["id"], "link": link, "seconds": round(time.monotonic() - started, 1),
            "seeds": seeds, "agents": {entry["name"]: entry["measures"] for entry in agents}}


def main(argv: Sequence[str] | None = None) -> int:
    from platform_sdk.errors import PlatformError

    args = parse_args(argv)
    try:
        summary = compare(args)
    except KeyboardInterrupt:
        out_err(f"{PROG}: interrupted; nothing was stored")
        return 130
    except (AgentLoadError, NoSnapshotsError) as exc:
        out_err(f"{PROG}: error: {exc}")
        return 2
    except PlatformError as exc:
        out_err(f"{PROG}: error: {args.env}: {_first_line(exc)}")
        return 1
    except AgentError as exc:
        out_err(f"{PROG}: error: {exc}")
        return 3
    except Exception as exc:  # noqa: BLE001 - an agent's own code failed: its traceback, then one line
        traceback.print_exc()
        out_err(f"{PROG}: error: an agent raised {type(exc).__name__}: {_first_line(exc)}")
        return 3
    out(json.dumps(summary))
    return 0


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
