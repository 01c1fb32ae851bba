"""tools/gpu_server.py against a real OpenSSH server (Debian's openssh-server, /usr/sbin/sshd) on
a free loopback port, with its own host key and authorized_keys; the "server's" home is a scratch
folder (authorized_keys sets HOME for the key). `deploy` uploads this checkout, sets it up with
`uv sync --frozen --offline` (the second half of `make setup`, from uv's cache: seconds instead
of minutes) and starts the real platform from the unpacked source; then status, logs, stop, and
the tunnel line it printed, run with the system's ssh. Bad input: a closed port, a refused key,
a changed host key, a server without make, a port in use, a failing setup."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from platform_testing.ports import free_port
from platform_testing.waiting import wait_for

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "gpu_server.py"
SSHD = Path("/usr/sbin/sshd")

sys.path.insert(0, str(REPO / "tools"))
import gpu_server as gpu_server_cli  # noqa: E402
from remote_platform.archive import source_files  # noqa: E402
from remote_platform.errors import ToolError  # noqa: E402
from remote_platform.target import SshTarget, parse_target  # noqa: E402


@dataclass
class SshServer:
    port: int
    home: Path  # the scratch home of the key's sessions
    key: Path  # authorized
    refused_key: Path  # not in authorized_keys
    no_make_key: Path  # authorized, its sessions' PATH has everything but make
    client_env: dict[str, str]  # HOME with its own ~/.ssh/known_hosts, no SSH agent
    known_hosts: Path


def _keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return path


def _path_without_make(folder: Path) -> str:
    """A PATH folder with links to every command on the usual PATH but make."""
    folder.mkdir()
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for entry in Path(directory).iterdir() if Path(directory).is_dir() else []:
            link = folder / entry.name
            if entry.name != "make" and not link.exists() and not link.is_symlink():
                link.symlink_to(entry)
    return str(folder)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def ssh_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    assert SSHD.exists(), "no /usr/sbin/sshd: scripts/install_system_deps.sh installs openssh-server"
    base = tmp_path_factory.mktemp("sshd")
    home = base / "remote-home"
    home.mkdir()
    host_key = _keygen(base / "host_key")
    key, refused_key, no_make_key = (_keygen(base / name) for name in ("key", "refused_key", "no_make_key"))
    no_make_path = _path_without_make(base / "bin-without-make")
    (base / "authorized_keys").write_text(
        f'environment="HOME={home}" {(base / "key.pub").read_text()}'
        f'environment="HOME={home}",environment="PATH={no_make_path}" {(base / "no_make_key.pub").read_text()}')
    port = free_port()
    config = base / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}",
        f"AuthorizedKeysFile {base / 'authorized_keys'}", f"PidFile {base / 'sshd.pid'}",
        "StrictModes no", "UsePAM no", "PermitRootLogin yes", "PubkeyAuthentication yes",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PermitUserEnvironment yes",
        "AllowTcpForwarding yes", "LogLevel VERBOSE", ""]))
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
    log = (base / "sshd.log").open("w")
    sshd = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _listening(port) or sshd.poll() is not None, timeout=20, what="sshd listening")
        assert sshd.poll() is None, (base / "sshd.log").read_text()
        client_home = base / "client-home"
        client_home.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
        env["HOME"] = str(client_home)
        yield SshServer(port=port, home=home, key=key, refused_key=refused_key, no_make_key=no_make_key,
                        client_env=env, known_hosts=client_home / ".ssh" / "known_hosts")
    finally:
        _stop_platforms_left_running(home)
        sshd.terminate()
        sshd.wait(timeout=10)
        log.close()
        shutil.rmtree(home, ignore_errors=True)  # the deployed .venv among it


def _stop_platforms_left_running(home: Path) -> None:
    """A platform a failed test left running in the scratch home: its whole session killed."""
    for started in home.glob("*/.gpu_server/platform.json"):
        record = json.loads(started.read_text())
        pid = record.get("pid")
        if not isinstance(pid, int) or "stopped_at" in record:
            continue
        try:
            # the pid is still that platform's: its session, started in that folder
            if os.getsid(pid) == pid and Path(f"/proc/{pid}/cwd").resolve() == started.parent.parent:
                for member in _session_members(pid):
                    os.kill(member, signal.SIGKILL)
        except OSError:
            pass


def gpu_server(server: SshServer, *args: str, key: Path | None = None, timeout: float = 240,
               ) -> subprocess.CompletedProcess[str]:
    command, *rest = args
    return subprocess.run(
        [sys.executable, str(TOOL), command, "root@127.0.0.1", "-p", str(server.port),
         "-i", str(key or server.key), *rest],
        capture_output=True, text=True, timeout=timeout, env=server.client_env, cwd=REPO)


def quick_setup() -> str:
    """The second half of `make setup` (uv sync) from this machine's uv cache, offline, with the
    interpreter this workspace's .venv was made from: another one (the system's python3 on the
    server's PATH) can need other wheels (uv.lock resolves some packages per Python version) that
    the cache never held."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
    python = getattr(sys, "_base_executable", sys.executable)
    return (f"UV_CACHE_DIR={shlex.quote(cache)} {shlex.quote(uv)} sync --all-packages --frozen --offline "
            f"--python {shlex.quote(python)}")


def assert_one_line_error(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(error_lines) == 1, result.stderr
    for text in expected:
        assert text in error_lines[0], result.stderr


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def test_deploy_status_logs_stop_against_a_real_sshd(ssh_server: SshServer, tmp_path: Path) -> None:
    platform_port = free_port()
    ssh_server.known_hosts.unlink(missing_ok=True)  # this test meets the server first, whatever ran before it
    started = time.monotonic()
    deployed = gpu_server(ssh_server, "deploy", "--platform-port", str(platform_port),
                          "--setup-command", quick_setup(), "--env", "PLATFORM_POOLS=")
    deploy_s = time.monotonic() - started
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    out = deployed.stdout
    for step in ("first connection to this server", "checking the server", "packing ", "uploading ",
                 "unpacked ", "setting up: ", "set up in", "starting the platform", "answers (HTTP"):
        assert step in out, (step, out)
    folder = ssh_server.home / "simulusion-platform"  # the default --dir, in the server's home
    tunnel_line = f"ssh -L {platform_port}:127.0.0.1:{platform_port} -p {ssh_server.port} -i {ssh_server.key} root@127.0.0.1"
    assert tunnel_line in out, out
    print(f"deploy took {deploy_s:.1f} s:\n{out}")

    # The real platform, started from the unpacked source, in a session of its own.
    assert http_status(f"http://127.0.0.1:{platform_port}/healthz") == 200
    platform_pid = int(out.split("(pid ")[1].split(";")[0])
    assert Path(f"/proc/{platform_pid}/cwd").resolve() == folder
    assert os.getsid(platform_pid) == platform_pid
    assert (folder / "libs" / "local" / "src" / "platform_local" / "__main__.py").is_file()
    assert not (folder / ".git").exists() and (folder / ".venv" / "bin" / "python").exists()
    assert f"[127.0.0.1]:{ssh_server.port} ssh-ed25519 " in ssh_server.known_hosts.read_text()

    # The printed tunnel, with the system's ssh (and the host key the tool recorded), to another local port.
    local_port = free_port()
    tunnel_words = shlex.split(tunnel_line)
    tunnel_words[2] = f"{local_port}:127.0.0.1:{platform_port}"
    tunnel = subprocess.Popen(tunnel_words[:1] + ["-N", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                                                  "-o", f"UserKnownHostsFile={ssh_server.known_hosts}"]
                              + tunnel_words[1:], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: http_status(f"http://127.0.0.1:{local_port}/healthz") == 200 or tunnel.poll() is not None,
                 timeout=20, what="the tunnel")
        assert tunnel.poll() is None, tunnel.stderr.read() if tunnel.stderr else ""
    finally:  # an ssh still connecting once ignored SIGTERM for 10 s: its cleanup must not hide the failure
        tunnel.terminate()
        try:
            tunnel.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tunnel.kill()
            tunnel.wait()

    status = gpu_server(ssh_server, "status")
    assert status.returncode == 0, status.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    assert f"running: yes, pid {platform_pid}" in status.stdout
    assert f"http://127.0.0.1:{platform_port}/ on the server: answers (HTTP" in status.stdout
    assert f"deployed: {head}" in status.stdout

    logs = gpu_server(ssh_server, "logs", "-n", "400")
    assert logs.returncode == 0, logs.stderr
    assert f"Uvicorn running on http://127.0.0.1:{platform_port}" in logs.stdout

    # logs -f: prints as the log grows, ends on Ctrl-C without a traceback, leaves no tail behind.
    # -X faulthandler: a SIGABRT makes it print every thread's stack (what it waits on, should it not end)
    follow = subprocess.Popen([sys.executable, "-X", "faulthandler", str(TOOL), "logs", "root@127.0.0.1",
                               "-p", str(ssh_server.port), "-i", str(ssh_server.key), "-f", "-n", "1"],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ssh_server.client_env)
    assert follow.stdout is not None
    follow.stdout.readline()
    with (folder / "platform.log").open("a") as log:
        log.write("a line written while following\n")
    # the platform's own lines may come first (its preview warmer starts sessions in the background)
    watchdog = threading.Timer(30, follow.kill)  # a line that never comes fails the test, never hangs it
    watchdog.start()
    followed: list[str] = []
    while (line := follow.stdout.readline()) and line != "a line written while following\n":
        followed.append(line)
    watchdog.cancel()
    assert line == "a line written while following\n", f"logs -f printed {followed}, not the line written"
    follow.send_signal(signal.SIGINT)
    # read what it still prints while it ends: the platform keeps logging, and a tool blocked on a
    # full pipe that nobody reads would never get to its exit
    # (120 s: on a loaded CI machine its exit once took over 60; a tool that never exits still fails,
    # killed so that it leaves nothing running)
    try:
        _, errors = follow.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        follow.send_signal(signal.SIGABRT)
        try:
            _, errors = follow.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            follow.kill()
            _, errors = follow.communicate()
        pytest.fail(f"logs -f did not end within 120 s of Ctrl-C; its stacks then: {errors[-6000:]}")
    assert follow.returncode == 130, errors
    assert "Traceback" not in errors
    wait_for(lambda: not _tails_of(folder / "platform.log"), timeout=10, what="the server's tail -F to end")

    again = gpu_server(ssh_server, "deploy", "--platform-port", str(platform_port), "--setup-command", "true")
    assert_one_line_error(again, "already runs", f"pid {platform_pid}")

    stop_started = time.monotonic()
    stopped = gpu_server(ssh_server, "stop")
    print(f"stop took {time.monotonic() - stop_started:.1f} s")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped (pid {platform_pid}, all its processes ended)" in stopped.stdout
    assert not _session_members(platform_pid)
    assert http_status(f"http://127.0.0.1:{platform_port}/healthz") is None

    after = gpu_server(ssh_server, "status")
    assert after.returncode == 3 and "running: no" in after.stdout, after
    assert "was not running" in gpu_server(ssh_server, "stop").stdout


def _session_members(session: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == session:
            members.append(int(stat.parent.name))
    return members


def _tails_of(log: Path) -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if words[:1] == [b"tail"] and str(log).encode() in words:
            pids.append(int(cmdline.parent.name))
    return pids


def test_a_closed_port_is_unreachable(ssh_server: SshServer) -> None:
    closed = free_port()
    result = subprocess.run([sys.executable, str(TOOL), "status", f"ssh://root@127.0.0.1:{closed}",
                             "-i", str(ssh_server.key)], capture_output=True, text=True, timeout=60,
                            env=ssh_server.client_env)
    assert_one_line_error(result, f"cannot reach 127.0.0.1 port {closed}", "Connection refused")


def test_a_python_without_asyncssh_runs_the_tool_with_the_workspaces(ssh_server: SshServer) -> None:
    """`python tools/gpu_server.py` with a python3 that lacks asyncssh (here: the workspace's base
    interpreter) goes on with .venv's."""
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    assert subprocess.run([base_python, "-c", "import asyncssh"], capture_output=True).returncode != 0
    closed = free_port()
    result = subprocess.run([base_python, str(TOOL), "status", f"root@127.0.0.1:{closed}"],
                            capture_output=True, text=True, timeout=60, env=ssh_server.client_env)
    assert_one_line_error(result, f"cannot reach 127.0.0.1 port {closed}")


def test_a_refused_key(ssh_server: SshServer) -> None:
    result = gpu_server(ssh_server, "status", key=ssh_server.refused_key)
    assert_one_line_error(result, "authentication refused", str(ssh_server.refused_key))


def test_a_changed_host_key_refuses_the_connection(ssh_server: SshServer, tmp_path: Path) -> None:
    other = _keygen(tmp_path / "other_host_key")
    known = ssh_server.known_hosts
    known.parent.mkdir(exist_ok=True)
    before = known.read_text() if known.exists() else None
    algorithm, encoded = Path(f"{other}.pub").read_text().split()[:2]
    known.write_text(f"[127.0.0.1]:{ssh_server.port} {algorithm} {encoded}\n")
    try:
        result = gpu_server(ssh_server, "deploy", "--setup-command", "true")
        assert_one_line_error(result, "host key", "changed", f"ssh-keygen -R '[127.0.0.1]:{ssh_server.port}'")
        assert "packing" not in result.stdout
    finally:
        if before is None:
            known.unlink()
        else:
            known.write_text(before)


def test_a_server_without_make(ssh_server: SshServer) -> None:
    result = gpu_server(ssh_server, "deploy", "--dir", "no-make-here", key=ssh_server.no_make_key)
    assert_one_line_error(result, "the server lacks what the setup needs: make")
    assert not (ssh_server.home / "no-make-here").exists()


def test_a_platform_port_in_use(ssh_server: SshServer) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = gpu_server(ssh_server, "deploy", "--dir", "port-in-use", "--platform-port", str(port),
                            "--setup-command", "true")
    assert_one_line_error(result, f"port {port} is already in use on the server", "--platform-port")


def test_a_failing_setup_shows_the_end_of_its_log(ssh_server: SshServer) -> None:
    result = gpu_server(ssh_server, "deploy", "--dir", "failing-setup", "--platform-port", str(free_port()),
                        "--setup-command", "echo preparing; echo 'no such package: simulusion-x' >&2; exit 7")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "setup failed on the server (exit status 7)" in result.stderr
    assert "| no such package: simulusion-x" in result.stderr
    log = ssh_server.home / "failing-setup" / ".gpu_server" / "setup.log"
    assert "no such package: simulusion-x" in log.read_text()


@pytest.mark.parametrize(("text", "expected"), [
    ("root@203.0.113.7", SshTarget("203.0.113.7", 22, "root")),
    ("ssh://ubuntu@gpu.example.com:2222", SshTarget("gpu.example.com", 2222, "ubuntu")),
    ("$ ssh root@203.0.113.7 -p 22045 -i ~/.ssh/key", SshTarget("203.0.113.7", 22045, "root", "~/.ssh/key")),
    ("ssh -p 41234 root@host -L 8080:localhost:8080", SshTarget("host", 41234, "root")),
    ('ssh -i "key.pem" ubuntu@ec2-3-1-2-3.compute.amazonaws.com',
     SshTarget("ec2-3-1-2-3.compute.amazonaws.com", 22, "ubuntu", "key.pem")),
    ("ssh -l bob -o Port=2200 -tt gpu", SshTarget("gpu", 2200, "bob")),
    ("ssh -o User=alice -p2201 -N -v gpu nvidia-smi", SshTarget("gpu", 2201, "alice")),
    ("root@[2001:db8::7]:2022", SshTarget("2001:db8::7", 2022, "root")),
    ("root@2001:db8::7", SshTarget("2001:db8::7", 22, "root")),
    ("root@gpu.example.com:2022", SshTarget("gpu.example.com", 2022, "root")),
])
def test_targets_as_providers_show_them(text: str, expected: SshTarget) -> None:
    assert parse_target(text) == expected


def test_an_unquoted_ssh_command_line_is_the_target() -> None:
    args = gpu_server_cli.parse_args(["status", "ssh", "-p", "22045", "root@203.0.113.7", "-L", "8080:localhost:8080",
                                      "-o", "User=admin", "-tt"])
    assert parse_target(args.target, port=args.port) == SshTarget("203.0.113.7", 22045, "admin")


def test_the_tools_own_port_and_key_win_over_the_targets() -> None:
    assert parse_target("ssh -p 1 -i a root@h", port=2, identity="b") == SshTarget("h", 2, "root", "b")


@pytest.mark.parametrize(("text", "message"), [
    ("ssh -J bastion root@h", "jump host"),
    ("ssh -p", "needs a value"),
    ("ssh -p x root@h", "bad SSH port"),
    ("root@h extra words", "cannot read"),
    ("ssh -v", "no user@host"),
])
def test_targets_that_cannot_be_used(text: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_target(text)


def test_the_archive_of_a_folder_that_is_not_a_git_checkout(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "libs/a/x.py", ".venv/bin/python", "web/node_modules/m/i.js",
                 "web/dist/index.html", "web/src/main.tsx", "test-output/r.txt", "libs/a/__pycache__/x.pyc",
                 "recordings/e.ep", "libs/a/MUJOCO_LOG.TXT"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / ".gitignore").write_text("MUJOCO_LOG.TXT\n/recordings/\n")
    assert source_files(tmp_path) == [".gitignore", "libs/a/x.py", "pyproject.toml", "web/src/main.tsx"]
