"""The environment-server commands without the SDK's server extra (as the client wheel installs
it): one line naming the install command and exit 1, before anything imports grpc."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from platform_sdk import __main__ as sdk_main
from platform_sdk.check import __main__ as check_main
from platform_sdk.server import __main__ as server_main
from platform_sdk.server_extra import require_server_extra


@pytest.mark.parametrize("main, command", [
    (sdk_main.main, "python -m platform_sdk"),
    (server_main.main, "platform-env-server"),
    (check_main.main, "platform-check"),
])
def test_a_missing_server_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                            main, command: str) -> None:  # type: ignore[no-untyped-def]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "grpc" else real(name, *a))
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{command}: error: this command needs the SDK's server extra (grpc is not installed): "
        "pip install 'platform_sdk[server]'"]


def test_with_the_extra_nothing_is_said() -> None:
    require_server_extra("platform-env-server")
    for module in ("platform_sdk", "platform_sdk.check"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0 and "usage:" in done.stdout, done.stderr
