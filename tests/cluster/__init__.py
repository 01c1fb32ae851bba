"""The platform across several "machines" (network namespaces on one bridge) for the cluster
tests (tests/test_cluster_*.py): `network` makes the machines, `forwarder` lets them reach the
root namespace's PostgreSQL, `platform` starts a NATS cluster and the services on them."""
