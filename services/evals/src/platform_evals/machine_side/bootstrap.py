"""The eval's command on the machine: makes (or reuses) the virtual environment, then runs
`inspect_run` in it. Standard library only, for the machine's `python3` (3.10 or newer).

Sent by the evals service in the experiment's variables (never stored by the platform):
`SIMULUSION_EVAL_BOOTSTRAP` (this file), `SIMULUSION_EVAL_INSPECT_RUN` (inspect_run.py) and
`SIMULUSION_EVAL_SPEC` (JSON: the requirements and what inspect_run needs). The environment is
`~/.simulusion/evals/venvs/<hash of the requirements and the Python>`, made once, under a lock,
by `uv` when it is on PATH (`uv venv`, `uv pip install`), else `python3 -m venv` and pip; a
finished one has a `.ready` file and is reused by every eval with the same requirements.
"""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import List, NoReturn

MARK = "@@simulusion-eval "


def say(event: str, **fields: object) -> None:
    print(MARK + json.dumps({"event": event, **fields}), flush=True)


def fail(message: str) -> NoReturn:
    say("finished", status="error", error=message)
    sys.exit(1)


def venv_folder(requirements: List[str]) -> Path:
    key = json.dumps({"python": sys.version_info[:3], "requirements": sorted(requirements)})
    root = Path(os.path.expanduser("~/.simulusion/evals/venvs"))
    root.mkdir(parents=True, exist_ok=True)
    return root / hashlib.sha256(key.encode()).hexdigest()[:16]


def run(command: List[str]) -> None:
    print("$ " + " ".join(command), flush=True)
    done = subprocess.run(command, stdout=sys.stdout, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        fail(f"{command[0]} {command[1]} ... exited with {done.returncode} (its output is in the log above)")


def make_venv(folder: Path, requirements: List[str]) -> None:
    if folder.exists():
        shutil.rmtree(folder)  # an unfinished one (no .ready)
    uv = shutil.which("uv")
    if uv:
        run([uv, "venv", "--quiet", "--python", sys.executable, str(folder)])
        run([uv, "pip", "install", "--python", str(folder / "bin" / "python"), *requirements])
    else:
        run([sys.executable, "-m", "venv", str(folder)])
        run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             *requirements])
    (folder / ".ready").write_text(json.dumps({"requirements": requirements, "made": time.time()}))


def ready_venv(requirements: List[str]) -> Path:
    folder = venv_folder(requirements)
    with open(str(folder) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another eval making the same one: wait for it
        if (folder / ".ready").exists():
            say("environment", folder=str(folder), made=False)
        else:
            say("environment", folder=str(folder), made=True, requirements=requirements)
            started = time.monotonic()
            make_venv(folder, requirements)
            print(f"[eval] environment ready in {time.monotonic() - started:.1f} s", flush=True)
    return folder


def main() -> None:
    spec = json.loads(os.environ["SIMULUSION_EVAL_SPEC"])
    inner = os.environ.pop("SIMULUSION_EVAL_INSPECT_RUN")
    os.environ.pop("SIMULUSION_EVAL_BOOTSTRAP", None)
    if sys.version_info < (3, 10):
        fail(f"python3 on this machine is {sys.version.split()[0]}; Inspect needs 3.10 or newer")
    run_dir = Path.cwd().parent
    folder = ready_venv(spec["requirements"])
    (run_dir / "inspect_run.py").write_text(inner)
    spec["run_dir"] = str(run_dir)
    os.environ["SIMULUSION_EVAL_SPEC"] = json.dumps(spec)
    python = str(folder / "bin" / "python")
    os.execv(python, [python, str(run_dir / "inspect_run.py")])


if __name__ == "__main__":
    main()
