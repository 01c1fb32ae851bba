"""The eval's command on the machine: makes (or reuses) the virtual environment, then runs
`inspect_run` in it. Standard library only, for the machine's `python3` (3.10 or newer).

Sent by the evals service in the experiment's variables (never stored by the platform):
`SIMULUSION_EVAL_BOOTSTRAP` (this file), `SIMULUSION_EVAL_INSPECT_RUN` (inspect_run.py) and
`SIMULUSION_EVAL_SPEC` (JSON: the requirements and what inspect_run needs). The environment is
`~/.simulusion/evals/venvs/<hash of the requirements and the Python>`, made once, under a lock,
by `uv` when it is on PATH (`uv venv`, `uv pip install`), else `python3 -m venv` and pip; a
finished one has a `.ready` file and is reused by every eval with the same requirements.

The requirement `PLATFORM_WHEEL` (a task of the platform's SDK, `platform_sdk/episodes`) is the
platform's own SDK wheel with its `inspect` extra: fetched from `$PLATFORM_URL/v0/wheels/platform-sdk`
with `PLATFORM_TOKEN` (the experiment's forward and token), kept under
`~/.simulusion/evals/wheels/<its sha256>/` and installed from there, so the environment is made
again only when the platform serves another SDK.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import List, NoReturn

MARK = "@@simulusion-eval "
WHEEL_ROUTE = "/v0/wheels/platform-sdk"
PLATFORM_WHEEL = "platform-sdk[inspect] @ $PLATFORM_URL" + WHEEL_ROUTE


def say(event: str, **fields: object) -> None:
    print(MARK + json.dumps({"event": event, **fields}), flush=True)


def fail(message: str) -> NoReturn:
    say("finished", status="error", error=message)
    sys.exit(1)


def platform_wheel() -> Path:
    """The platform's SDK wheel, fetched with the experiment's PLATFORM_URL and PLATFORM_TOKEN and
    kept under the name the platform gives it, in a folder named by its sha256."""
    url = os.environ.get("PLATFORM_URL", "").rstrip("/") + WHEEL_ROUTE
    request = urllib.request.Request(url)
    if os.environ.get("PLATFORM_TOKEN"):
        request.add_header("Authorization", "Bearer " + os.environ["PLATFORM_TOKEN"])
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            data = answer.read()
            named = re.search(r'filename="([^"/]+\.whl)"', answer.headers.get("Content-Disposition", ""))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        fail(f"the platform's SDK wheel could not be fetched from {url}: {exc}")
    if not named:
        fail(f"{url} answered no wheel's name (Content-Disposition)")
    digest = hashlib.sha256(data).hexdigest()
    path = Path(os.path.expanduser("~/.simulusion/evals/wheels")) / digest[:16] / named.group(1)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part")
        partial.write_bytes(data)
        partial.replace(path)
    print(f"[eval] the platform's SDK: {path.name}, {len(data)} bytes, sha256 {digest[:16]}", flush=True)
    return path


def resolved(requirements: List[str]) -> List[str]:
    """The requirements with PLATFORM_WHEEL as the fetched wheel's file, with its `inspect` extra."""
    return [f"platform-sdk[inspect] @ {platform_wheel().as_uri()}" if requirement == PLATFORM_WHEEL else requirement
            for requirement in requirements]


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
    folder = ready_venv(resolved(spec["requirements"]))
    (run_dir / "inspect_run.py").write_text(inner)
    spec["run_dir"] = str(run_dir)
    os.environ["SIMULUSION_EVAL_SPEC"] = json.dumps(spec)
    python = str(folder / "bin" / "python")
    os.execv(python, [python, str(run_dir / "inspect_run.py")])


if __name__ == "__main__":
    main()
