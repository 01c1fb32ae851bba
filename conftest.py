"""The shared fixtures of platform-testing (a real nats-server, moto's S3 server, the whole
platform), for the tests of every member and of tests/.

scripts/test_members.py runs each member's tests in an environment of that member alone, which
holds platform-testing only where the member's dev group names it; without it these fixtures are
not registered, and a test asking for one fails with pytest's "fixture ... not found".
"""

import importlib.util

pytest_plugins = (
    ["platform_testing.fixtures", "platform_testing.platform"] if importlib.util.find_spec("platform_testing") else []
)
