"""The SDK's tests import their helpers (`sdk_server_client`: the environment server as a real
process, and a gRPC client for it) from this folder (pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
