"""The cross-service tests: helpers shared by several of them live beside them (contract_ids.py).
The fixtures are the root conftest's (platform-testing's)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # tests import their helpers (importlib mode)
