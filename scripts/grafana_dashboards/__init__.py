"""The platform's Grafana dashboards as code (grafana-foundation-sdk), written as JSON by
scripts/gen_dashboards.py into deploy/grafana/ and the chart's files/dashboards/.

Every query names only series of platform_contracts.metric_names (tests/deploy/test_dashboards.py
parses each with a PromQL parser and checks its names against that list)."""
