"""Runs one Inspect eval in the machine's virtual environment and prints its progress.

Sent to the machine by the evals service and run there by `bootstrap` with the environment's
Python (never imported by the service). The spec is the JSON of the `SIMULUSION_EVAL_SPEC`
variable: task, task_args, model, model_args, limit, epochs, log_dir. Each progress line is
`@@simulusion-eval ` and one JSON object:

    {"event": "started", "total": N}                      the task started: N samples (x epochs)
    {"event": "sample", "done": D, "errors": E, "tokens": T, "total": N}
    {"event": "log", "path": "logs/....eval", "status": "started"}   a log Inspect began (said as
        soon as it is in the log folder, so a cancelled eval's logs are known), then again with its
        final status once the eval returned
    {"event": "finished", "status": "success" | "error" | "cancelled", "error": "..."}

TERM (the experiment's cancel) is taken as Ctrl-C: Inspect then cancels its samples and writes
its logs with status "cancelled", holding the samples done so far.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai import eval as inspect_eval
from inspect_ai.hooks import Hooks, SampleEnd, TaskStart, hooks

MARK = "@@simulusion-eval "


def say(event: str, **fields: Any) -> None:
    print(MARK + json.dumps({"event": event, **fields}), flush=True)


class Logs:
    run_dir = Path(".")
    said: ClassVar[set[str]] = set()

    @classmethod
    def say_new(cls) -> None:
        """A `log` line for each log of the log folder not said yet (Inspect makes it when its task
        starts)."""
        for path in sorted((cls.run_dir / "logs").glob("*.eval")):
            relative = str(path.relative_to(cls.run_dir))
            if relative not in cls.said:
                cls.said.add(relative)
                say("log", path=relative, status="started")


class Counts:
    total = 0
    done = 0
    errors = 0
    tokens = 0


@hooks(name="simulusion_progress", description="progress lines for the Simulusion platform")
class Progress(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        dataset = data.spec.dataset
        samples = len(dataset.sample_ids) if dataset.sample_ids is not None else (dataset.samples or 0)
        Counts.total = samples * (data.spec.config.epochs or 1)
        say("started", total=Counts.total)
        Logs.say_new()

    async def on_sample_end(self, data: SampleEnd) -> None:
        if data.sample.error is not None and data.sample.error.message.startswith("CancelledError"):
            return  # a sample Inspect stopped when the eval was cancelled: not done
        Counts.done += 1
        Counts.errors += data.sample.error is not None
        Counts.tokens += sum(usage.total_tokens for usage in data.sample.model_usage.values())
        say("sample", done=Counts.done, errors=Counts.errors, tokens=Counts.tokens, total=Counts.total)
        Logs.say_new()


def main() -> int:
    spec = json.loads(os.environ.pop("SIMULUSION_EVAL_SPEC"))
    run_dir = Logs.run_dir = Path(spec["run_dir"])
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        logs = inspect_eval(
            spec["task"], model=spec["model"], model_args=spec.get("model_args") or {},
            task_args=spec.get("task_args") or {}, limit=spec.get("limit") or None,
            epochs=spec.get("epochs") or None, log_dir=str(run_dir / "logs"), log_format="eval",
            display="plain", fail_on_error=False)
    except BaseException as exc:  # noqa: BLE001 - said to the platform, then the exit status
        cancelled = isinstance(exc, KeyboardInterrupt)
        Logs.say_new()
        say("finished", status="cancelled" if cancelled else "error", error=f"{type(exc).__name__}: {exc}")
        return 130 if cancelled else 1
    failed = ""
    for log in logs:
        location = Path(log.location)
        path = location.relative_to(run_dir) if location.is_relative_to(run_dir) else location
        say("log", path=str(path), status=log.status)
        if log.status != "success" and log.error is not None:
            failed = failed or log.error.message
    status = "success" if all(log.status == "success" for log in logs) else "error"
    say("finished", status=status, error=failed)
    return 0 if status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
