"""The shell the platform runs on a machine for an experiment (bash; nothing is installed there).

Run folder `$HOME/.simulusion/experiments/<id>/` (mode 0700): `checkout/` (the clone, or the
folder uploaded), `env.sh`
(the variables; removed once read), `command.sh`, `run.sh` (the wrapper), `pgid`, `log` (the
command's stdout and stderr) and `exit_code` (written when the command ends).

- `launch_script`: clone and check out (or find the uploaded `checkout/`), write the files,
  start `run.sh` with `setsid nohup` (its own session and process group, detached from the SSH
  connection), then wait up to a moment for a command that fails at once. Fed on stdin to `bash -s`, so no secret is on a command line.
- `poll_command`: the state (`exit=N`, `running`, `dead`, `gone`) then the log from an offset.
- `cancel_command`: TERM to the process group, then KILL after a grace.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

RUN_ROOT = "$HOME/.simulusion/experiments"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
CLONE_FAILED = 91
CHECKOUT_FAILED = 92
NO_FOLDER = 90


def run_dir_expr(experiment_id: str) -> str:
    """The run folder as a shell word (its `$HOME` expanded there)."""
    return f'"{RUN_ROOT}/{experiment_id}"'


def env_file(env: Mapping[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())


RUN_SH = """#!/bin/bash
# The experiment's wrapper (platform_machines.experiment_script).
cd "$(dirname "$0")" || exit 1
echo $$ > pgid
. ./env.sh && rm -f env.sh
trap 'true' TERM
(cd checkout && exec bash ../command.sh)
code=$?
echo "$code" > exit_code.tmp && mv exit_code.tmp exit_code
"""


def launch_script(experiment_id: str, repository: str, ref: str, command: str, env: Mapping[str, str],
                  fail_fast_s: float, uploaded: bool = False, log_start: str = "") -> str:
    """Prints `run_dir=<absolute folder>`, then `pid=<pgid>` and, when the command ended within
    `fail_fast_s`, `exit=<code>`, then `since_start_ns=<ns>` (how long ago the command started,
    by the machine's own clock; left out without GNU date's %N); exits CLONE_FAILED /
    CHECKOUT_FAILED with git's words.

    `uploaded`: `checkout/` is there already (a folder uploaded, folder_upload): nothing is
    cloned; no repository either: `checkout/` is an empty folder. `log_start`: the log's first bytes (the upload's lines, which the platform kept
    already); the command's output follows them."""
    if uploaded:
        source = f'[ -d checkout ] || {{ echo "the uploaded checkout/ is missing"; exit {NO_FOLDER}; }}'
    elif not repository:  # a command alone: it runs in an empty checkout/
        source = f"mkdir -p checkout || exit {NO_FOLDER}"
    else:
        checkout = f"cd checkout && git checkout --quiet {shlex.quote(ref)} && cd .." if ref else "true"
        source = f"""if ! GIT_TERMINAL_PROMPT=0 git clone --quiet -- {shlex.quote(repository)} checkout > git.log 2>&1 < /dev/null; then
  tail -c 2000 git.log; cd / && rm -rf "$run_dir"; exit {CLONE_FAILED}
fi
if ! ( {checkout} ) > git.log 2>&1; then
  tail -c 2000 git.log; cd / && rm -rf "$run_dir"; exit {CHECKOUT_FAILED}
fi"""
    waits = max(int(fail_fast_s * 10), 0)
    return f"""set -u
umask 077
run_dir={run_dir_expr(experiment_id)}
mkdir -p "$run_dir" && cd "$run_dir" || exit {NO_FOLDER}
echo "run_dir=$run_dir"
{source}
printf '%s' {shlex.quote(env_file(env))} > env.sh
printf '%s\\n' {shlex.quote(command)} > command.sh
printf '%s' {shlex.quote(RUN_SH)} > run.sh
printf '%s' {shlex.quote(log_start)} > log
setsid nohup bash "$run_dir/run.sh" >> log 2>&1 < /dev/null &
echo "pid=$!"
began=$(date +%s%N 2>/dev/null)
i=0
while [ $i -lt {waits} ] && [ ! -f exit_code ]; do sleep 0.1; i=$((i+1)); done
if [ -f exit_code ]; then echo "exit=$(cat exit_code)"; fi
case "$began" in *[!0-9]*|"") ;; *) echo "since_start_ns=$(( $(date +%s%N) - began ))" ;; esac
exit 0
"""


def poll_command(experiment_id: str, offset: int, max_bytes: int) -> str:
    """The first line says the state: `exit=N` (it ended: the log is complete), `running`,
    `dead` (no process and no exit code: killed with KILL, or the machine restarted) or `gone`
    (no run folder); the log's bytes from `offset` (at most `max_bytes`) follow."""
    return f"""cd {run_dir_expr(experiment_id)} 2>/dev/null || {{ echo gone; exit 0; }}
if [ -f exit_code ]; then echo "exit=$(cat exit_code)"
elif [ -f pgid ] && kill -0 -- "-$(cat pgid)" 2>/dev/null; then echo running
elif [ -f exit_code ]; then echo "exit=$(cat exit_code)"
else echo dead; fi
tail -c +{offset + 1} log 2>/dev/null | head -c {max_bytes}
"""


def cancel_command(experiment_id: str, grace_s: float, remove: bool = False) -> str:
    """TERM to the whole process group, KILL to what is left after `grace_s`; `remove`: the run
    folder goes too (a start cut off before it said its pid)."""
    waits = max(int(grace_s * 10), 1)
    finish = f"cd / && rm -rf {run_dir_expr(experiment_id)}; exit 0" if remove else "exit 0"
    return f"""cd {run_dir_expr(experiment_id)} 2>/dev/null || exit 0
if [ -f pgid ]; then
  pg=$(cat pgid)
  if kill -TERM -- "-$pg" 2>/dev/null; then
    i=0
    while [ $i -lt {waits} ] && kill -0 -- "-$pg" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
    kill -KILL -- "-$pg" 2>/dev/null
  fi
fi
{finish}
"""


@dataclass(frozen=True)
class PollResult:
    state: str  # "exit", "running", "dead", "gone"
    exit_code: int | None
    data: bytes


def parse_poll(output: bytes) -> PollResult:
    head, _, data = output.partition(b"\n")
    line = head.decode(errors="replace").strip()
    if line.startswith("exit="):
        try:
            return PollResult("exit", int(line[5:]), data)
        except ValueError:
            return PollResult("dead", None, data)
    if line in ("running", "dead", "gone"):
        return PollResult(line, None, data)
    return PollResult("gone", None, b"")
