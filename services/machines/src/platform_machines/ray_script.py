"""The shell of an experiment's Ray cluster (bash, in the checkout; nothing installed system-wide):

- `head_command`: the experiment's command on its machine: the setup, `ray start --head
  --block` in the background (in the experiment's process group: a cancel stops it), a bounded
  wait for the head to answer and for the workers to join, then the user's command with
  `RAY_ADDRESS` set; the head is stopped (TERM to `ray start --block`, which stops its
  processes) when the command ends, and the experiment ends with the command's exit code.
- `worker_command`: a worker's command on its machine: the setup, a bounded wait for the head,
  then `ray start --address <head>:<port> --block` (its run folder's `joined` says it got there).
- `worker_poll_command`: a worker's state: `exit=N`, `running`, `starting` or `dead`/`gone`.

Every line the platform writes into the log starts with `[platform] ray:`.
"""

from __future__ import annotations

import shlex

from platform_machines.experiment_script import run_dir_expr
from platform_machines.ray_spec import RaySpec

HEAD_WAIT_S = 120  # for `ray start --head` to answer
JOIN_WAIT_S = 300  # for every worker to join (their setup runs meanwhile)
SETUP_FAILED = 96
RAY_FAILED = 97

# the nodes alive, waited for up to a limit: python WANT LIMIT_S ADDRESS
_COUNT_NODES = """import sys, time, ray
want, limit, address = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ray.init(address=address, log_to_driver=False, logging_level="ERROR")
end = time.monotonic() + limit
while True:
    alive = sum(1 for node in ray.nodes() if node["Alive"])
    if alive >= want or time.monotonic() > end:
        print(alive)
        sys.exit(0 if alive >= want else 1)
    time.sleep(1)
"""


def _prelude(spec: RaySpec) -> str:
    venv = spec.venv if spec.venv.startswith("/") else f"$PWD/{spec.venv}"
    setup = (f"""echo "[platform] ray: running the setup"
bash -c {shlex.quote(spec.setup)} || {{ code=$?; echo "[platform] ray: the setup failed (exit $code)"; exit {SETUP_FAILED}; }}
""" if spec.setup.strip() else "")
    return f"""{setup}venv="{venv}"
if [ ! -x "$venv/bin/ray" ]; then
  echo "[platform] ray: $venv/bin/ray is missing: ray.setup must make the virtual environment ray.venv with Ray in it"
  exit {SETUP_FAILED}
fi
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
: "${{RAY_AUTH_MODE:=disabled}}" "${{RAY_USAGE_STATS_ENABLED:=0}}"
export RAY_AUTH_MODE RAY_USAGE_STATS_ENABLED
"""


def head_command(spec: RaySpec, command: str) -> str:
    local = f"127.0.0.1:{spec.port}"
    nodes = len(spec.workers) + 1
    return f"""{_prelude(spec)}echo "[platform] ray: starting the head on port {spec.port}"
ray start --head --port {spec.port} --include-dashboard=false {spec.start_args} --block < /dev/null &
ray_pid=$!
stop_ray() {{ kill -TERM "$ray_pid" 2>/dev/null; wait "$ray_pid" 2>/dev/null; }}
i=0
until ray status --address {local} > /dev/null 2>&1; do
  if ! kill -0 "$ray_pid" 2>/dev/null; then echo "[platform] ray: the head stopped while starting"; exit {RAY_FAILED}; fi
  i=$((i+1))
  if [ $i -ge {HEAD_WAIT_S} ]; then echo "[platform] ray: the head did not answer within {HEAD_WAIT_S} s"; stop_ray; exit {RAY_FAILED}; fi
  sleep 1
done
echo "[platform] ray: the head answers; waiting for {nodes - 1} worker(s) to join (at most {JOIN_WAIT_S} s)"
if ! alive=$(python -c {shlex.quote(_COUNT_NODES)} {nodes} {JOIN_WAIT_S} {local} | tail -n 1); then
  echo "[platform] ray: only ${{alive:-0}} of {nodes} nodes joined within {JOIN_WAIT_S} s (see the workers' states)"
  stop_ray; exit {RAY_FAILED}
fi
echo "[platform] ray: $alive nodes; running the command with RAY_ADDRESS={local}"
export RAY_ADDRESS={local}
bash -c {shlex.quote(command)}
code=$?
echo "[platform] ray: the command exited with $code; stopping the head"
stop_ray
exit $code
"""


def worker_command(spec: RaySpec, head: str) -> str:
    address = f"{head}:{spec.port}"
    return f"""{_prelude(spec)}echo "[platform] ray: waiting for the head at {address}"
i=0
until ray status --address {shlex.quote(address)} > /dev/null 2>&1; do
  i=$((i+1))
  if [ $i -ge {HEAD_WAIT_S + JOIN_WAIT_S} ]; then echo "[platform] ray: the head {address} did not answer"; exit {RAY_FAILED}; fi
  sleep 1
done
touch ../joined
exec ray start --address {shlex.quote(address)} {spec.start_args} --block < /dev/null
"""


def worker_poll_command(run_id: str) -> str:
    """One line: `exit=N`, `running` (joined), `starting`, `dead` or `gone`; then the log's last
    2000 bytes when it is not running."""
    return f"""cd {run_dir_expr(run_id)} 2>/dev/null || {{ echo gone; exit 0; }}
if [ -f exit_code ]; then echo "exit=$(cat exit_code)"
elif [ -f pgid ] && kill -0 -- "-$(cat pgid)" 2>/dev/null; then
  if [ -f joined ]; then echo running; else echo starting; fi; exit 0
else echo dead; fi
tail -c 2000 log 2>/dev/null
"""
