"""The deployment's tests (images, Compose): their helpers live beside them (settings_names.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the tests import their helpers (importlib mode)
