"""`python -m platform_sdk.agents.run ENV_ID ...` (also `platform-agent`): run an agent on a
platform session, optionally recorded into a life, and print its progress.

Exit codes: 0 done; 1 a platform error (one line on stderr naming the session, env and step);
2 bad arguments; 130 interrupted (Ctrl-C: the session is closed first).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from platform_sdk.agents.loading import AgentLoadError, build_agent, load_agent
from platform_sdk.agents.loop import RunStats, run_agent

PROG = "platform-agent"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (exit 2), without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at character {exc.pos}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object like '{{\"name\": 1}}', got {text!r}")
    return value


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="Run an agent on a platform session: one line per episode, a summary at the end.",
    )
    parser.add_argument("env_id", metavar="ENV_ID", help="a catalog id (GET /v0/envs lists them), e.g. cartpole")
    parser.add_argument("--url", help="the platform; default PLATFORM_URL, then http://127.0.0.1:8000")
    parser.add_argument("--token", metavar="T", help="API token; default PLATFORM_TOKEN")
    parser.add_argument("--agent", default="random", metavar="random|module:factory",
                        help="'random' (samples the action space) or module:factory, called with the env "
                             "(the current folder is importable); default random")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--episodes", type=positive_int, metavar="N", help="stop after N finished episodes (default 1)")
    budget.add_argument("--steps", type=positive_int, metavar="N", help="stop after N steps")
    parser.add_argument("--seed", type=int, metavar="S", help="seeds the first reset and the random agent")
    parser.add_argument("--kwargs", type=json_object, default=None, metavar="JSON",
                        help="keyword arguments of the environment, a JSON object")
    parser.add_argument("--endless", action="store_true",
                        help="no time limits: the environment restarts in place (kwargs endless=true)")
    parser.add_argument("--record", action="store_true", help="record every step")
    parser.add_argument("--life", metavar="NAME", help="record into the life NAME (needs --record)")
    parser.add_argument("--frame-every", type=positive_int, metavar="N",
                        help="keep one frame in N (needs --life)")
    parser.add_argument("--max-frames", type=positive_int, metavar="M",
                        help="never keep more than M frames: the spacing doubles each time a twentieth "
                             "of M is used (needs --life)")
    parser.add_argument("--resume", metavar="SNAPSHOT_ID",
                        help="start at a saved snapshot (its environment arguments are used)")
    parser.add_argument("--save-every", type=positive_int, metavar="N",
                        help="save a snapshot every N steps and print its id, for --resume")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The arguments, checked together; a bad combination exits 2 with one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.life is not None and not args.record:
        parser.error("argument --life: needs --record (a life is a recording)")
    for name in ("frame_every", "max_frames"):
        if getattr(args, name) is not None and args.life is None:
            parser.error(f"argument --{name.replace('_', '-')}: thins the frames of a life: needs --life NAME")
    if args.resume is not None and (args.kwargs is not None or args.endless):
        parser.error("argument --resume: the snapshot's environment arguments are used; "
                     "leave out --kwargs and --endless")
    if args.episodes is None and args.steps is None:
        args.episodes = 1
    if args.endless:
        args.kwargs = {**(args.kwargs or {}), "endless": True}
    try:
        args.make_agent = load_agent(args.agent, seed=args.seed)
    except AgentLoadError as exc:
        parser.error(f"argument --agent: {exc}")
    return args


def session_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The `connect`/`resume` keyword arguments the options ask for (life ones only when given)."""
    settings: dict[str, Any] = {"url": args.url, "token": args.token, "record": args.record, "auto_reset": True}
    for name in ("life", "frame_every", "max_frames"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    return settings


def open_session(args: argparse.Namespace) -> Any:
    """A new session (or one resumed at `--resume`), auto-resetting, as the options say."""
    import platform_sdk

    settings = session_settings(args)
    if args.resume is None:
        return platform_sdk.connect(args.env_id, kwargs=args.kwargs, **settings)
    from platform_sdk.client.resume import saved_snapshot

    saved = saved_snapshot(args.resume, args.url, args.token)
    if saved["env_id"] != args.env_id:
        raise platform_sdk.InvalidRequestError(f"snapshot {args.resume} is of {saved['env_id']}, not {args.env_id}")
    return platform_sdk.resume(args.resume, **settings)


class Runner:
    """One run: the session, the agent, the loop, and what is printed when it ends."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.env: Any = None
        self.stats = RunStats()

    def where(self) -> str:
        if self.env is None:
            return f"{self.args.env_id} (no session started)"
        return f"session {self.env.session_id} ({self.args.env_id}), after {self.stats.steps} steps"

    def run(self) -> int:
        from platform_sdk.errors import PlatformError

        try:
            self._run()
        except KeyboardInterrupt:
            failed = self._close()
            self._summary()
            closed = "the session is closed" if failed is None else f"closing the session failed: {failed}"
            print(f"{PROG}: interrupted: {self.where()}; {closed}", file=sys.stderr, flush=True)
            return 130
        except (PlatformError, AgentLoadError) as exc:
            self._fail(exc)
            self._close()
            return 1
        except BaseException:
            self._close()  # an error in the agent's own code: its traceback follows
            raise
        failed = self._close()
        if failed is not None:
            self._fail(failed)
            return 1
        self._summary()
        return 0

    def _run(self) -> None:
        args = self.args
        self.env = open_session(args)
        life = f", life {args.life}" if args.life else ""
        how = f"resumed at snapshot {args.resume}" if args.resume else "started"
        print(f"session {self.env.session_id} ({args.env_id}) {how}"
              f"{', recording' if args.record else ''}{life}", flush=True)
        agent = build_agent(args.make_agent, self.env, args.agent)
        if args.resume:
            observation = self.env.resumed[0]
        else:
            observation, _ = self.env.reset(seed=args.seed)
        run_agent(self.env, agent, observation, episodes=args.episodes, steps=args.steps,
                  save_every=args.save_every, stats=self.stats, out=lambda line: print(line, flush=True))

    def _close(self) -> BaseException | None:
        """Closes the session; returns the error when that failed."""
        if self.env is None:
            return None
        try:
            self.env.close()
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            return exc
        return None

    def _summary(self) -> None:
        stats, args = self.stats, self.args
        session = self.env.session_id if self.env is not None else "none"
        life = f", life {args.life}" if args.life else ""
        print(f"done: {stats.steps} steps, {stats.episodes} episodes, {stats.steps_per_s:.1f} steps/s, "
              f"session {session}{life}", flush=True)

    def _fail(self, exc: BaseException) -> None:
        print(f"{PROG}: error: {self.where()}: {self._message(exc)}", file=sys.stderr, flush=True)

    def _message(self, exc: BaseException) -> str:
        lines = str(exc).strip().splitlines()
        message = lines[0] if lines else type(exc).__name__
        if self.env is not None and message.startswith(f"session {self.env.session_id} ") and ": " in message:
            message = message.split(": ", 1)[1]  # the SDK's own "session ... step n: " prefix, said once
        return message


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return Runner(args).run()


if __name__ == "__main__":
    sys.exit(main())
