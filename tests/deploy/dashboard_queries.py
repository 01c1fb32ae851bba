"""The PromQL of the generated Grafana dashboards (deploy/grafana/*.json), and the series each
query names, read with a real PromQL parser (promql-parser: Prometheus' grammar, in Rust)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import promql_parser

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "deploy" / "grafana"
# What Grafana puts in place of its variables before the query reaches Prometheus (a range, a
# window, or the regular expression of an "All" selection).
GRAFANA_RANGES = {"__rate_interval": "2m", "__interval": "30s", "__range": "1h"}
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")


@dataclass(frozen=True)
class Query:
    dashboard: str
    where: str  # the panel's title or the variable's name
    expr: str  # as the dashboard holds it, Grafana's variables in it

    def promql(self) -> str:
        """The query as Prometheus gets it: Grafana's variables replaced."""
        return VARIABLE.sub(lambda found: GRAFANA_RANGES.get(found[1] or found[2], ".*"), self.expr)


@dataclass(frozen=True)
class Selector:
    name: str
    labels: frozenset[str]


def dashboards() -> dict[str, dict[str, Any]]:
    """Every generated dashboard, by file name."""
    return {path.name: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}


def queries(name: str, dashboard: dict[str, Any]) -> list[Query]:
    """Every panel target's `expr` and every query variable's `label_values(...)` selector."""
    found = [Query(name, panel["title"], target["expr"])
             for panel in dashboard["panels"] for target in panel.get("targets", [])]
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable["type"] != "query":
            continue
        match = LABEL_VALUES.match(variable["query"])
        assert match, f"{name}: variable {variable['name']}: not label_values(selector, label): {variable['query']}"
        found.append(Query(name, f"variable {variable['name']}", match["selector"]))
    return found


def selectors(query: Query) -> list[Selector]:
    """The vector selectors of the query, parsed; a selector without a metric name fails."""
    try:
        tree = promql_parser.parse(query.promql())
    except ValueError as error:
        raise AssertionError(f"{query.dashboard}: {query.where}: {query.promql()!r} does not parse: {error}") from error
    found: list[Selector] = []

    def visit(node: object) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            matchers = [*node.matchers.matchers, *(m for group in node.matchers.or_matchers for m in group)]
            named = node.name or next((m.value for m in matchers if m.name == "__name__"), None)
            assert named, f"{query.dashboard}: {query.where}: a selector without a metric name: {query.expr}"
            found.append(Selector(named, frozenset(m.name for m in matchers if m.name != "__name__")))
        return True

    promql_parser.walk(tree, visit)
    return found
