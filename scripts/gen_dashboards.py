"""Write the platform's Grafana dashboards as JSON (make gen; make check-gen compares).

    python scripts/gen_dashboards.py

From the code in scripts/grafana_dashboards (grafana-foundation-sdk) to
- deploy/grafana/<uid>.json: what the Compose profile `observability` provisions into Grafana;
- deploy/helm/simulusion-platform/files/dashboards/<uid>.json: the same files inside the chart,
  which makes them ConfigMaps for Grafana's sidecar (`metrics.dashboards.enabled`): helm reads
  only files inside a chart.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from grafana_foundation_sdk.builders.dashboard import Dashboard
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_dashboards import overview, work

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = (ROOT / "deploy" / "grafana", ROOT / "deploy" / "helm" / "simulusion-platform" / "files" / "dashboards")
DASHBOARDS: tuple[tuple[str, Callable[[], Dashboard]], ...] = (
    (overview.UID, overview.dashboard),
    (work.UID, work.dashboard),
)


def built(make: Callable[[], Dashboard]) -> object:
    """The dashboard's model, its panels numbered in order (stable links to a panel)."""
    model = make().build()
    for number, panel in enumerate(model.panels or [], start=1):
        panel.id_val = number
    return model


def rendered() -> dict[str, str]:
    """Each dashboard's file name and JSON text."""
    return {f"{uid}.json": json.dumps(built(make), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
            for uid, make in DASHBOARDS}


def main() -> int:
    files = rendered()
    for folder in OUTPUTS:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.json"):
            if stale.name not in files:
                stale.unlink()
        for name, text in files.items():
            path = folder / name
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
    print(f"gen_dashboards: {len(files)} dashboards in {', '.join(str(f.relative_to(ROOT)) for f in OUTPUTS)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
