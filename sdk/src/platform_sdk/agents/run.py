"""`python -m platform_sdk.agents.run --agent my_agent:make --env cartpole ...` (also
`platform-agent`): run an agent on one platform session, log each episode (or each --window
steps of an endless run) and print a JSON summary as the last line.

Exit codes: 0 done; 1 a platform error (the environment crashed, the platform went away: one
line naming the session, environment and step); 2 bad arguments, or an agent that cannot be
built or lacks what the options need; 3 the agent raised (its traceback, then one line);
130 interrupted (Ctrl-C or SIGTERM). Whatever stopped the run, the agent is saved first when
--save was given.
"""

from __future__ import annotations

import argparse
import signal
import sys
import traceback
from collections.abc import Sequence
from types import FrameType
from typing import Any

from platform_sdk.agents.interface import AgentError, agent_info, optional_method
from platform_sdk.agents.loading import AgentLoadError, load_agent
from platform_sdk.agents.loop import AgentLoop
from platform_sdk.agents.run_options import PROG, parse_args
from platform_sdk.agents.summary import RunSummary, WindowTally, episode_line
from platform_sdk.agents.training import Training, TrainingState, state_path


def out(line: str) -> None:
    print(line, flush=True)


def open_session(args: argparse.Namespace) -> Any:
    """The session the options ask for: a new one, or one at --from-saved-snapshot."""
    import platform_sdk

    settings: dict[str, Any] = {"url": args.url, "token": args.token, "record": args.record,
                                "record_frames": args.record, "auto_reset": True}
    for name in ("life", "frame_every", "max_frames"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if args.saved_snapshot is None:
        return platform_sdk.connect(args.env, kwargs=args.kwargs, **settings)
    from platform_sdk.client.resume import saved_snapshot

    saved = saved_snapshot(args.saved_snapshot, args.url, args.token)
    if args.env is not None and saved["env_id"] != args.env:
        raise platform_sdk.InvalidRequestError(f"snapshot {args.saved_snapshot} is of {saved['env_id']}, "
                                               f"not {args.env}")
    args.env = saved["env_id"]
    settings.pop("record_frames")
    return platform_sdk.resume(args.saved_snapshot, record_frames=args.record, **settings)


class Runner:
    """One run: the agent, the session, the loop, saving, and what is printed when it ends."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.agent: Any = None
        self.env: Any = None
        self.loop: AgentLoop | None = None
        self.total_reward = 0.0
        self.summary = RunSummary(env=args.env or "?", life=args.life)
        self.training: Training | None = None

    def where(self, stopped: bool = False) -> str:
        """The session, environment and step at fault (`stopped`: how far the run got)."""
        if self.env is None:
            return f"{self.args.env} (no session started)"
        steps = self.loop.iterations if self.loop is not None else 0
        at = f"after {steps} steps" if stopped else f"step {steps + 1}"
        return f"session {self.env.session_id} ({self.args.env}), {at}"

    def build(self) -> int | None:
        """Builds the agent; an exit code when it cannot run with these options."""
        try:
            self.agent = load_agent(self.args.agent, self.args.config or {})
        except AgentLoadError as exc:
            return self._refuse(f"argument --agent: {exc}")
        for option, method in (("save", "save"), ("load", "load")):
            if getattr(self.args, option) is not None and optional_method(self.agent, method) is None:
                return self._refuse(f"argument --{option}: {type(self.agent).__name__} has no {method}(path) method")
        needs = (("resume", "load", "load(path) method"), ("test_every", "set_training", "set_training(bool) method "
                 "(told False for a greedy test episode)"), ("epsilon", "set_epsilon", "set_epsilon(value) method"))
        for option, method, what in needs:
            if getattr(self.args, option, None) not in (None, False) and optional_method(self.agent, method) is None:
                return self._refuse(f"argument --{option.replace('_', '-')}: {type(self.agent).__name__} has no {what}")
        return None

    def run(self) -> int:
        from platform_sdk.errors import PlatformError

        refused = self.build()
        if refused is not None:
            return refused
        ended, code = "completed", 0
        try:
            self._run()
        except KeyboardInterrupt:
            ended, code = "interrupted", 130
        except PlatformError as exc:
            ended, code = "platform error", 1
            self._fail(exc)
        except AgentError as exc:
            ended, code = "agent error", 3
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - the agent's own code failed: its traceback, then one line
            ended, code = "agent error", 3
            traceback.print_exc()
            self._fail(exc)
        if code in (1, 130):
            self._finish_early()
        self._save(final=True)
        failed = self._close()
        if failed is not None and code == 0:
            ended, code = "platform error", 1
            self._fail(failed)
        if code == 130:
            out_err(f"{PROG}: interrupted: {self.where(stopped=True)}"
                    f"{'; the agent is saved in ' + str(self.args.save) if self.summary.saved else ''}")
        self.summary.ended = ended
        if self.training is not None:
            self.summary.training = self.training.summary()
            self.training.close(ended)
        out(self.summary.as_json(self.loop, self.args.endless, self.total_reward))
        return code

    def _run(self) -> None:
        args = self.args
        self.env = open_session(args)
        self.summary.env = args.env
        self.summary.session_id = self.env.session_id
        if args.record:
            from platform_sdk.client.settings import resolve_url

            self.summary.recording_id = self.env.session_id
            self.summary.replay = f"{resolve_url(args.url).rstrip('/')}/recordings/{self.env.session_id}"
        how = f"at saved snapshot {args.saved_snapshot}" if args.saved_snapshot else "started"
        life = f", life {args.life}" if args.life else ""
        out(f"session {self.env.session_id} ({args.env}) {how}{', recording' if args.record else ''}{life}")
        starts = [self.env.resumed] if args.saved_snapshot else None
        seeds = [args.seed] if args.seed is not None and starts is None else None
        episodes = args.episodes
        resumed = self._resumed_state() if args.training else None
        if resumed is not None and episodes is not None:
            episodes = max(episodes - resumed.episodes, 0)
        if args.training:
            self.training = Training(args, self.agent, resumed or TrainingState())
            run = self.training.open_run(self.env.session_id, args.record)
            out(f"training run {run.id}: {run.url}")
            if self.training.goal_reached or episodes == 0:
                out(f"{PROG}: the checkpoint at {args.save} is of a finished run: nothing to do")
                return
        self.loop = loop = AgentLoop(self.agent, [self.env], episodes=episodes, seeds=seeds,
                                     max_steps=args.max_steps, starts=starts)
        loop.start()
        if args.load is not None:
            self.agent.load(args.load)
        if resumed is not None:
            self.agent.load(args.save)
        if self.training is not None:
            self.training.begin_episode(loop)
            self._train(loop)
            return
        self.summary.agent = agent_info(self.agent)
        tally = WindowTally()
        saves_due = args.save_every
        while not loop.done and (args.steps is None or loop.iterations < args.steps):
            ended = loop.step()
            reward = loop.rewards[0] or 0.0
            self.total_reward += reward
            tally.reward += reward
            tally.steps += 1
            tally.restarts += len(ended)
            if not args.endless:
                for record in ended:
                    out(episode_line(record))
                    if saves_due and record.episode % saves_due == 0:
                        self._save()
            elif loop.iterations % args.window == 0:
                out(tally.line(loop.iterations))
                tally = tally.next(loop.iterations)
                if saves_due and (loop.iterations // args.window) % saves_due == 0:
                    self._save()
        if args.endless and tally.steps:
            out(tally.line(loop.iterations))
        loop.finish()
        self.summary.agent = agent_info(self.agent)

    def _resumed_state(self) -> TrainingState | None:
        """The runner's state at the last checkpoint when resuming from one (None: a fresh start)."""
        if not self.args.resume:
            return None
        path = state_path(self.args.save)
        if not path.exists():
            out(f"no checkpoint at {path}: starting afresh")
            return None
        state = TrainingState.load(path)
        out(f"resuming from the checkpoint after episode {state.episodes} ({path})")
        return state

    def _train(self, loop: AgentLoop) -> None:
        """The training mode's loop: one line per episode, tests, checkpoints, until the goal or
        the episodes or steps asked for."""
        args, training = self.args, self.training
        assert training is not None
        self.summary.agent = agent_info(self.agent)
        while not loop.done and (args.steps is None or loop.iterations < args.steps):
            ended = loop.step()
            self.total_reward += loop.rewards[0] or 0.0
            for record in ended:
                for line in training.end_episode(record):
                    out(line)
                if training.checkpoint_due():
                    self._save()
                    out(f"checkpoint after episode {training.state.episodes}: {training.save_state()}")
                if training.goal_reached:
                    break
            if training.goal_reached:
                break
            if ended:
                training.begin_episode(loop)
        loop.finish()
        self.summary.agent = agent_info(self.agent)

    def _finish_early(self) -> None:
        """A run stopped by Ctrl-C or the platform still gives the agent the outcomes no act saw
        (the episode that ended just before), so what it saves includes them."""
        if self.loop is None:
            return
        try:
            self.loop.finish()
        except Exception as exc:  # noqa: BLE001 - reported; the run's own ending stands
            out_err(f"{PROG}: the agent's finish failed: {type(exc).__name__}: {exc}")

    def _save(self, final: bool = False) -> None:
        if self.args.save is None or self.loop is None or not self.loop.started:
            return
        try:
            self.agent.save(self.args.save)
        except Exception as exc:  # noqa: BLE001 - a failed save is reported, the run's own ending stands
            out_err(f"{PROG}: saving the agent to {self.args.save} failed: {type(exc).__name__}: {exc}")
            return
        self.summary.saved = str(self.args.save)
        if final and self.training is not None and (self.args.checkpoint_every or self.args.resume):
            self.training.save_state()  # the agent saved last: --resume continues from here
        if not final:
            out(f"saved the agent to {self.args.save} after {len(self.loop.finished)} episodes, "
                f"{self.loop.iterations} steps")

    def _close(self) -> BaseException | None:
        """Closes the loop and the session; returns the error when closing failed."""
        if self.loop is not None:
            self.loop.close()
        if self.env is None:
            return None
        try:
            self.env.close()
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            return exc
        return None

    def _refuse(self, message: str) -> int:
        out_err(f"{PROG}: error: {message}")
        return 2

    def _fail(self, exc: BaseException) -> None:
        out_err(f"{PROG}: error: {self.where()}: {self._message(exc)}")

    def _message(self, exc: BaseException) -> str:
        lines = str(exc).strip().splitlines()
        message = lines[0] if lines else type(exc).__name__
        if self.env is not None and message.startswith(f"session {self.env.session_id} ") and ": " in message:
            message = message.split(": ", 1)[1]  # the SDK's own "session ... step n: " prefix, said once
        if not isinstance(exc, AgentError) and type(exc).__module__ not in ("platform_sdk.errors",):
            message = f"{type(exc).__name__}: {message}"
        return message


def out_err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    return Runner(args).run()


if __name__ == "__main__":
    sys.exit(main())
