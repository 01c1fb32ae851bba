"""Machines, experiments and evals: the users' GPU machines, the experiments on them and the
Inspect evaluations by status, their API's traffic, and the two services' health."""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row
from platform_contracts import metric_names as m

from grafana_dashboards.panels import (
    bucket,
    family,
    graph,
    new_dashboard,
    rate,
    single,
    spec_named,
)

UID = "simulusion-machines-experiments-evals"
# The gateway's route templates of the three APIs (`/v0/machines/{machine_id}`, ...).
ROUTES = 'route=~"/v0/(machines|experiments|evals).*"'
FAILED = 'status=~"[45].."'
SERVICES = 'service=~"machines|evals"'


def dashboard() -> Dashboard:
    board = new_dashboard(
        UID, "Simulusion: machines, experiments and evals",
        "The users' GPU machines, experiments and Inspect evaluations by status, the requests to their API, "
        "and the machines and evals services' health.", ["machines", "experiments", "evals"])
    for add in (_states, _api, _services):
        board = add(board)
    return board


def _by_status(title: str, what: str, series: str) -> tuple[str, str, str, list[tuple[str, str]]]:
    return title, what, "short", [(f"sum by (status) ({series})", "{{status}}")]


def _states(board: Dashboard) -> Dashboard:
    machines, experiments, evals = family(m.MACHINES), family(m.EXPERIMENTS), family(m.EVALS)
    board = (board.with_row(Row("By status"))
             .with_panel(single("Machines", "The users' GPU machines, every status.", "short", f"sum({machines})",
                                width=8))
             .with_panel(single("Experiments", "Experiments on the machines, every status.", "short",
                                f"sum({experiments})", width=8))
             .with_panel(single("Evals", "Inspect evaluations, every status.", "short", f"sum({evals})", width=8)))
    for title, what, unit, targets in (_by_status("Machines by status", "The users' GPU machines.", machines),
                                       _by_status("Experiments by status", "Experiments on the machines.",
                                                  experiments),
                                       _by_status("Evals by status", "Inspect evaluations.", evals)):
        board = board.with_panel(graph(title, what + " by status.", unit, targets, stacked=True))
    return board


def _api(board: Dashboard) -> Dashboard:
    requests = family(m.HTTP_REQUESTS)
    return (board.with_row(Row("API"))
            .with_panel(graph("Requests by route", "Requests per second to the machines, experiments and evals "
                              "routes.", "reqps",
                              [(f"sum by (route, method) ({rate(requests, ROUTES)})", "{{method}} {{route}}")]))
            .with_panel(graph("Errors by route", "4xx and 5xx answers per second on those routes.", "reqps",
                              [(f"sum by (route, status) ({rate(requests, f'{ROUTES}, {FAILED}')})",
                                "{{route}} {{status}}")]))
            .with_panel(graph("Latency (p99) by route", "The 99th percentile of each route's time to answer.", "s",
                              [(f"histogram_quantile(0.99, sum by (le, route) "
                                f"({rate(bucket(m.HTTP_REQUEST_DURATION), ROUTES)}))", "{{route}}")])))


def _services(board: Dashboard) -> Dashboard:
    cpu = family(spec_named("simulusion_process_cpu_seconds_total"))
    resident = family(spec_named("simulusion_process_resident_memory_bytes"))
    return (board.with_row(Row("The machines and evals services"))
            .with_panel(graph("NATS connected", "1 while each replica's NATS connection is up.", "short",
                              [(f"min by (service, replica) ({family(m.NATS_CONNECTED)}{{{SERVICES}}})",
                                "{{service}} {{replica}}")]))
            .with_panel(graph("CPU", "CPU seconds per second of each replica's process.", "percentunit",
                              [(f"sum by (service, replica) ({rate(cpu, SERVICES)})", "{{service}} {{replica}}")]))
            .with_panel(graph("Resident memory", "Resident memory of each replica's process.", "bytes",
                              [(f"max by (service, replica) ({resident}{{{SERVICES}}})",
                                "{{service}} {{replica}}")])))
