"""Put the platform on a GPU server over SSH, and run it there:

    python tools/gpu_server.py deploy root@203.0.113.7 -p 22045   # then the printed ssh -L line
    python tools/gpu_server.py status root@203.0.113.7 -p 22045
    python tools/gpu_server.py logs   root@203.0.113.7 -p 22045 -f
    python tools/gpu_server.py stop   root@203.0.113.7 -p 22045

The server is `user@host`, `ssh://user@host:port`, or the ssh command your provider shows
(`deploy ssh root@1.2.3.4 -p 22045 -i ~/.ssh/key`, quoted or not). `deploy` uploads this checkout's source (what
`git ls-files` lists) to ~/simulusion-platform (--dir), sets it up as `make run` does here (make
setup, then the web app), starts `python -m platform_local` detached with its log in the folder,
waits until it answers on the server, and prints the `ssh -L` line that opens it here. The
server needs python3, make and access to PyPI (and Node.js 20+ with npm for the web app).

SSH is asyncssh (a dependency of the workspace), not the system's ssh/scp: the same behaviour on
every machine whatever its OpenSSH version and ~/.ssh/config, errors as exceptions to turn into
one line each (refused key, changed host key, unreachable host) instead of ssh's stderr to parse,
and the upload's progress from the bytes written. Host keys are checked against, and new ones
added to, ~/.ssh/known_hosts, which `ssh` reads too. Exit: 0 done, 1 failed (one line on stderr),
2 bad arguments, 3 `status`: not running.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKSPACE_ENV = REPO / ".venv"


def use_the_workspace_python() -> None:
    """Run again with the workspace's Python (.venv, made by `make setup`) when this one lacks asyncssh,
    so that a plain `python tools/gpu_server.py` works."""
    if importlib.util.find_spec("asyncssh") is not None:
        return
    python = WORKSPACE_ENV / "bin" / "python"
    if python.exists() and Path(sys.prefix).resolve() != WORKSPACE_ENV.resolve():
        os.execv(python, [str(python), __file__, *sys.argv[1:]])
    sys.exit("gpu_server.py: error: asyncssh is missing: run make setup first, then python tools/gpu_server.py "
             "(it uses .venv) or uv run python tools/gpu_server.py")


if __name__ == "__main__":
    use_the_workspace_python()

from remote_platform import control  # noqa: E402  (after the interpreter check)
from remote_platform.deploy import DEFAULT_SETUP, DeployOptions, deploy  # noqa: E402
from remote_platform.errors import Interrupted, ToolError  # noqa: E402
from remote_platform.progress import Progress  # noqa: E402
from remote_platform.target import parse_target  # noqa: E402

DEFAULT_FOLDER = "~/simulusion-platform"
DEFAULT_PLATFORM_PORT = 8000
INTERRUPTED_EXIT = 130


def parse_args(argv: list[str]) -> argparse.Namespace:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("target", help="user@host, ssh://user@host:port, or a quoted ssh command line")
    common.add_argument("-p", "--port", type=int, help="the server's SSH port (default 22, or the target's)")
    common.add_argument("-i", "--identity", help="private key file (default: your SSH agent and ~/.ssh keys)")
    common.add_argument("--dir", default=DEFAULT_FOLDER, dest="folder",
                        help=f"the platform's folder on the server (default {DEFAULT_FOLDER})")
    parser = argparse.ArgumentParser(prog="gpu_server.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{deploy,status,logs,stop}")
    deploy_parser = commands.add_parser("deploy", parents=[common], help="upload, set up and start the platform")
    deploy_parser.add_argument("--platform-port", type=int, default=DEFAULT_PLATFORM_PORT,
                               help=f"PLATFORM_PORT on the server (default {DEFAULT_PLATFORM_PORT})")
    deploy_parser.add_argument("--setup-command", default=DEFAULT_SETUP,
                               help=f"shell command run in the folder to set it up (default: {DEFAULT_SETUP})")
    deploy_parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                               help="a setting for the platform on the server, e.g. PLATFORM_AUTH=token (repeatable)")
    deploy_parser.add_argument("--wait-timeout", type=float, default=300.0,
                               help="seconds to wait for the started platform to answer (default 300)")
    commands.add_parser("status", parents=[common], help="running or not, pid, URL, version deployed")
    logs_parser = commands.add_parser("logs", parents=[common], help="the platform's log on the server")
    logs_parser.add_argument("-f", "--follow", action="store_true", help="keep printing new lines (Ctrl-C ends)")
    logs_parser.add_argument("-n", "--lines", type=int, default=100, help="lines to show (default 100)")
    commands.add_parser("stop", parents=[common], help="stop the platform and everything it started")
    args, rest = parser.parse_known_args(argv)
    if rest:
        # An unquoted `ssh ...` line: its words that are not this tool's options belong to it.
        if args.target not in ("ssh", "$"):
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        args.target = shlex.join(["ssh", *rest])
    return args


def platform_env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise ToolError(f"--env takes NAME=VALUE, not {pair!r}")
        env[name] = value
    return env


async def run(args: argparse.Namespace) -> int:
    target = parse_target(args.target, port=args.port, identity=args.identity)
    progress = Progress()
    if args.command == "deploy":
        if not 0 < args.platform_port < 65536:
            raise ToolError(f"--platform-port {args.platform_port} is out of range (1-65535)")
        options = DeployOptions(folder=args.folder, platform_port=args.platform_port,
                                setup_command=args.setup_command, platform_env=platform_env(args.env),
                                wait_timeout_s=args.wait_timeout)
        await deploy(target, REPO, options, progress)
        return 0
    if args.command == "status":
        return await control.status(target, args.folder, progress)
    if args.command == "logs":
        return await control.logs(target, args.folder, args.lines, args.follow)
    return await control.stop(target, args.folder, progress)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return asyncio.run(run(args))
    except ToolError as exc:
        Progress(sys.stderr).say(f"gpu_server.py {args.command}: error: {exc}")
        return 1
    except (KeyboardInterrupt, Interrupted):
        print("", file=sys.stderr)
        return INTERRUPTED_EXIT


if __name__ == "__main__":
    sys.exit(main())
