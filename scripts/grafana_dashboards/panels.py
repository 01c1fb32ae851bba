"""The pieces both dashboards are made of: the Prometheus data source and the `service` /
`replica` variables, time series and stat panels, and the PromQL they query."""

from __future__ import annotations

from collections.abc import Sequence

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as dashboard_builders
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog import variants
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.models import common, dashboard
from platform_contracts import metric_names
from platform_contracts.metric_names import MetricSpec

DATASOURCE_VARIABLE = "datasource"
DATASOURCE = dashboard.DataSourceRef(type_val="prometheus", uid=f"${{{DATASOURCE_VARIABLE}}}")
# Grafana's rate window: at least four scrape intervals of the data source.
RATE_WINDOW = "$__rate_interval"
# Every series carries these (the gateway's merge adds them): the panels that show one service's
# replicas filter on them.
BY_REPLICA = 'service=~"$service", replica=~"$replica"'
QUANTILES = (0.5, 0.9, 0.99)

Target = tuple[str, str]  # (PromQL, legend)


def spec_named(name: str) -> MetricSpec:
    """The exported family `name` (for those the list keeps no constant of, the process's)."""
    found = [spec for spec in metric_names.EXPORTED if spec.name == name]
    assert found, f"{name} is not in platform_contracts.metric_names.EXPORTED"
    return found[0]


def family(spec: MetricSpec) -> str:
    """A counter's or gauge's series name."""
    assert spec.kind != "histogram", f"{spec.name} is a histogram: use bucket() or count()"
    return spec.name


def bucket(spec: MetricSpec) -> str:
    assert spec.kind == "histogram", spec.name
    return f"{spec.name}_bucket"


def count(spec: MetricSpec) -> str:
    assert spec.kind == "histogram", spec.name
    return f"{spec.name}_count"


def selected(series: str, selector: str = "") -> str:
    """`series{selector}`, or the bare name when there is nothing to select."""
    return f"{series}{{{selector}}}" if selector else series


def rate(series: str, selector: str = "") -> str:
    return f"rate({selected(series, selector)}[{RATE_WINDOW}])"


def quantiles(spec: MetricSpec, by: str, selector: str = "") -> list[Target]:
    """The 50th, 90th and 99th percentiles of a histogram, per value of the label `by`."""
    return [(f"histogram_quantile({q}, sum by (le, {by}) ({rate(bucket(spec), selector)}))",
             f"p{round(q * 100)} {{{{{by}}}}}") for q in QUANTILES]


def query(expr: str, legend: str, ref_id: str) -> prometheus.Dataquery:
    return (prometheus.Dataquery().expr(expr).legend_format(legend or "__auto").ref_id(ref_id)
            .datasource(DATASOURCE).range())


def _ref_ids(targets: Sequence[Target]) -> list[Builder[variants.Dataquery]]:
    return [query(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(targets)]


def graph(title: str, description: str, unit: str, targets: Sequence[Target], *, stacked: bool = False,
          width: int = 8, height: int = 8) -> timeseries.Panel:
    """A time series panel of one or more queries."""
    panel = (timeseries.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
             .span(width).height(height).targets(_ref_ids(targets)).fill_opacity(10 if not stacked else 40)
             .legend(common_builders.VizLegendOptions().show_legend(True)
                     .display_mode(common.LegendDisplayMode.LIST).placement(common.LegendPlacement.BOTTOM))
             .tooltip(common_builders.VizTooltipOptions().mode(common.TooltipDisplayMode.MULTI)
                      .sort(common.SortOrder.DESCENDING)))
    if stacked:
        panel = panel.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
    return panel.min(0)


def single(title: str, description: str, unit: str, expr: str, *, width: int = 4, height: int = 8,
           red_above: float | None = None) -> stat.Panel:
    """A stat panel of one query's last value; red from `red_above` on when given."""
    steps = [dashboard.Threshold(value=None, color="green")]
    if red_above is not None:
        steps.append(dashboard.Threshold(value=red_above, color="red"))
    return (stat.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
            .span(width).height(height).targets(_ref_ids([(expr, "")]))
            .graph_mode(common.BigValueGraphMode.AREA).color_mode(common.BigValueColorMode.VALUE)
            .reduce_options(common_builders.ReduceDataOptions().calcs(["lastNotNull"]))
            .thresholds(dashboard_builders.ThresholdsConfig().mode(dashboard.ThresholdsMode.ABSOLUTE).steps(steps)))


def datasource_variable() -> dashboard_builders.DatasourceVariable:
    return (dashboard_builders.DatasourceVariable(DATASOURCE_VARIABLE).label("Prometheus").type("prometheus")
            .regex(""))


def label_variable(name: str, label: str, series: str, selector: str = "") -> dashboard_builders.QueryVariable:
    """A multi-valued variable of a label's values (`label_values(series{selector}, name)`), All by default."""
    values = f"label_values({selected(series, selector)}, {name})"
    return (dashboard_builders.QueryVariable(name).label(label).datasource(DATASOURCE)
            .query(values)
            .refresh(dashboard.VariableRefresh.ON_TIME_RANGE_CHANGED).sort(dashboard.VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".*")
            .current(dashboard.VariableOption(selected=True, text=["All"], value=["$__all"])))


def service_and_replica_variables() -> list[dashboard_builders.QueryVariable]:
    """`service` and `replica`, from the series every service exports."""
    connected = family(metric_names.NATS_CONNECTED)
    return [label_variable(metric_names.SERVICE_LABEL, "service", connected),
            label_variable(metric_names.REPLICA_LABEL, "replica", connected, 'service=~"$service"')]


def new_dashboard(uid: str, title: str, description: str, tags: list[str]) -> dashboard_builders.Dashboard:
    return (dashboard_builders.Dashboard(title).uid(uid).description(description).tags(["simulusion", *tags])
            .editable().time("now-1h", "now").refresh("30s").timezone("browser")
            .tooltip(dashboard.DashboardCursorSync.CROSSHAIR)
            .with_variable(datasource_variable()))
