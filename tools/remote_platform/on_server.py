"""The tool's work on the server, sent to the server's python3 on stdin (`python3 - <command> ...`)
each time: nothing of the tool is installed there. Written for any python3 from 3.7, as old
servers have, and with the standard library only.

    preflight FOLDER PORT NEED_SETUP_TOOLS   what the server has and lacks (JSON)
    unpack FOLDER ARCHIVE                    the source into FOLDER; files of the last deploy gone since removed
    start FOLDER PORT ENV_JSON               `python -m platform_local` detached, in a session of its own
    wait FOLDER PORT PID TIMEOUT             until http://127.0.0.1:PORT/ answers (lines: waiting/up/died/timeout)
    status FOLDER                            running or not, pid, port, URL answering, version (JSON)
    logs FOLDER LINES FOLLOW                 the platform's log (tail)
    stop FOLDER TIMEOUT                      SIGTERM to the platform's process group, then its whole session
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict

STATE_DIR = ".gpu_server"
LOG = "platform.log"
PYPI = "https://pypi.org/simple/uv/"
NPM = "https://registry.npmjs.org/"


def folder_path(folder: str) -> str:
    """`folder` as an absolute path: `~` and relative paths are in $HOME."""
    return os.path.abspath(os.path.join(os.path.expanduser("~"), os.path.expanduser(folder)))


def state_file(folder: str, name: str) -> str:
    return os.path.join(folder, STATE_DIR, name)


def read_json(path: str) -> Dict[str, Any]:
    try:
        with open(path) as f:
            found: Dict[str, Any] = json.load(f)
            return found
    except (OSError, ValueError):
        return {}


def reachable(url: str) -> str | None:
    """None when `url` answers, else why not."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10).close()
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return None


def answering(port: int) -> int | None:
    """The HTTP status of http://127.0.0.1:PORT/, or None when nothing answers there."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=3) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, ValueError):
        return None


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def command_version(command: list[str]) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.decode(errors="replace").strip().splitlines()
    return lines[0] if lines else ""


def process_state(pid: int) -> str | None:
    """The process's state letter (R, S, Z, ...) from /proc, "?" without /proc, None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None
    except (OSError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return "?"


def alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z")


def session_members(session: int) -> list[int]:
    """The live processes of session `session` (the platform and everything it started)."""
    members = []
    if os.path.isdir("/proc/self"):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % name) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and int(fields[3]) == session:
                members.append(int(name))
        return members
    out = subprocess.run(["ps", "-e", "-o", "pid=,sess="], stdout=subprocess.PIPE).stdout.decode()
    for line in out.splitlines():
        pid, _, sess = line.strip().partition(" ")
        if sess.strip() == str(session) and alive(int(pid)):
            members.append(int(pid))
    return members


def running_platform(folder: str) -> Dict[str, Any]:
    """The platform started in `folder` if it still runs: {"pid", "port", ...}, else {}."""
    started = read_json(state_file(folder, "platform.json"))
    pid = started.get("pid")
    if started.get("stopped_at") or not isinstance(pid, int) or not alive(pid):
        return {}
    try:
        if os.getsid(pid) != pid:
            return {}  # the pid now belongs to something else
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"platform_local" not in f.read():
                return {}
    except FileNotFoundError:
        pass  # no /proc: the session check has to do
    except OSError:
        return {}
    return started


def preflight(folder: str, port: str, need_setup_tools: str) -> None:
    folder = folder_path(folder)
    found = {
        "folder": folder,
        "python": "%d.%d.%d" % sys.version_info[:3],
        "make": command_version(["make", "--version"]),
        "uv": command_version(["uv", "--version"]) or command_version(
            [os.path.expanduser("~/.local/bin/uv"), "--version"]),
        "pip": command_version([sys.executable, "-m", "pip", "--version"]),
        "node": command_version(["node", "--version"]),
        "running": running_platform(folder),
        "port_free": port_free(int(port)),
    }
    if need_setup_tools == "1":
        found["pypi"] = reachable(PYPI)
        found["npm"] = reachable(NPM) if found["node"] else None
    print(json.dumps(found))


def unpack(folder: str, archive: str) -> None:
    folder = folder_path(folder)
    manifest = state_file(folder, "files.txt")
    try:
        with open(manifest) as f:
            previous = set(f.read().split("\n"))
    except OSError:
        previous = set()
    with tarfile.open(archive) as tar:
        names = [m.name for m in tar.getmembers() if not m.isdir()]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
    removed = 0
    for name in sorted(previous - set(names) - {""}):
        path = os.path.join(folder, name)
        if os.path.isfile(path) or os.path.islink(path):
            os.remove(path)
            removed += 1
    with open(manifest, "w") as f:
        f.write("\n".join(names))
    os.remove(archive)
    print(json.dumps({"files": len(names), "removed": removed}))


def start(folder: str, port: str, env_json: str) -> None:
    folder = folder_path(folder)
    python = os.path.join(folder, ".venv", "bin", "python")
    if not os.path.exists(python):
        print(json.dumps({"error": "no %s: the setup did not make the platform's environment" % python}))
        return
    env = dict(os.environ)
    env.update(json.loads(env_json))
    env["PLATFORM_PORT"] = port
    env.setdefault("PYTHONUNBUFFERED", "1")
    with open(os.path.join(folder, LOG), "ab") as log:
        log.write(("==== gpu_server.py: starting the platform at %s (PLATFORM_PORT=%s)\n"
                   % (time.strftime("%Y-%m-%d %H:%M:%S"), port)).encode())
        log.flush()
        process = subprocess.Popen([python, "-m", "platform_local"], cwd=folder, env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    with open(state_file(folder, "platform.json"), "w") as f:
        json.dump({"pid": process.pid, "port": int(port), "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, f)
    print(json.dumps({"pid": process.pid, "log": os.path.join(folder, LOG)}))


def wait(folder: str, port: str, pid: str, timeout: str) -> None:
    started = time.monotonic()
    while True:
        elapsed = time.monotonic() - started
        code = answering(int(port))
        if code is not None:
            print("up %d" % code, flush=True)
            return
        if not alive(int(pid)):
            print("died", flush=True)
            return
        if elapsed > float(timeout):
            print("timeout", flush=True)
            return
        print("waiting %d" % elapsed, flush=True)
        time.sleep(1)


def status(folder: str) -> None:
    folder = folder_path(folder)
    platform = running_platform(folder)
    last = read_json(state_file(folder, "platform.json"))
    port = platform.get("port") or last.get("port")
    print(json.dumps({
        "folder": folder,
        "deployed": os.path.isdir(os.path.join(folder, STATE_DIR)),
        "running": bool(platform),
        "pid": platform.get("pid"),
        "started_at": platform.get("started_at"),
        "port": port,
        "answering": answering(int(port)) if platform and port else None,
        "version": read_json(state_file(folder, "version.json")),
        "log": os.path.join(folder, LOG),
    }))


def logs(folder: str, lines: str, follow: str) -> None:
    path = os.path.join(folder_path(folder), LOG)
    if not os.path.exists(path):
        print("no log at %s: the platform was never started there" % path, file=sys.stderr)
        sys.exit(3)
    sys.stdout.flush()
    os.execvp("tail", ["tail", "-n", lines] + (["-F"] if follow == "1" else []) + [path])


def stop(folder: str, timeout: str) -> None:
    folder = folder_path(folder)
    platform = running_platform(folder)
    if not platform:
        print(json.dumps({"stopped": None}))
        return
    pid = platform["pid"]
    os.killpg(pid, signal.SIGTERM)  # the platform stops its services in order
    deadline = time.monotonic() + float(timeout)
    while session_members(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    killed = session_members(pid)
    for member in killed:
        try:
            os.kill(member, signal.SIGKILL)
        except OSError:
            pass
    platform["stopped_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with open(state_file(folder, "platform.json"), "w") as f:
        json.dump(platform, f)
    print(json.dumps({"stopped": pid, "killed": killed}))


COMMANDS: Dict[str, Callable[..., None]] = {"preflight": preflight, "unpack": unpack, "start": start, "wait": wait, "status": status,
            "logs": logs, "stop": stop}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](*sys.argv[2:])
