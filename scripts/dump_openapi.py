"""Write the gateway's OpenAPI document to web/openapi.json (the web app's client is generated from it).

`python scripts/dump_openapi.py [PATH]`: the document `/openapi.json` serves on a platform
without an API token, as stable JSON (sorted keys), so that `make check-gen` can compare it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from platform_gateway.app import api_app

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "web" / "openapi.json"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_PATH
    document = api_app(auth_required=False).openapi()
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
