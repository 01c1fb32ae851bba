"""`python -m platform_sdk.menagerie`: `python -m platform_envs.robots.menagerie` under the name the
overview gives (same arguments, same exit status); without the environments installed, one line
says what to install."""

from __future__ import annotations

import importlib
import sys

PROG = "python -m platform_sdk.menagerie"

if __name__ == "__main__":
    try:
        command = importlib.import_module("platform_envs.robots.menagerie.__main__")
    except ModuleNotFoundError as exc:
        print(f"{PROG}: error: the robots come with the platform's environments ({exc.name} is not installed): "
              "pip install 'platform-envs[robots]', as the env host has it", file=sys.stderr)
        raise SystemExit(1) from None
    sys.exit(command.main(prog=PROG))
