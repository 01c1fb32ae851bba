"""The shared fixtures of platform-testing (a real nats-server, moto's S3 server, the whole
platform), for the tests of every member and of tests/.

scripts/test_members.py runs each member's tests in an environment of that member alone, which
holds platform-testing only where the member's dev group names it; without it these fixtures are
not registered, and a test asking for one fails with pytest's "fixture ... not found".
"""

import importlib.util
import os
from pathlib import Path

pytest_plugins = (
    ["platform_testing.fixtures", "platform_testing.platform", "platform_testing.postgres", "platform_testing.sshd"]
    if importlib.util.find_spec("platform_testing") else []
)
# The Kubernetes API emulator and its test kubelet, where the `kubernetes` extra (kmock) is installed.
if importlib.util.find_spec("platform_testing") and importlib.util.find_spec("kmock"):
    pytest_plugins = [*pytest_plugins, "platform_testing.kubernetes"]


# Menagerie robots for tests: a local copy (nothing here downloads robots). A run that sets
# MENAGERIE_ROOT keeps it; otherwise the copy beside the checkout is used when it is there, and a
# robot test without either fails with the Menagerie loader's error naming MENAGERIE_ROOT.
_LOCAL_MENAGERIE = Path(__file__).resolve().parent.parent / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _LOCAL_MENAGERIE.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_LOCAL_MENAGERIE)
