"""`platform-check`: run the compliance suite against an environment before it is hosted.

`runner.check_launch_spec(spec)` launches the environment server for a `LaunchSpec` (a
factory, a Gymnasium id or a Docker image), connects over gRPC and returns the results
(`platform_contracts.compliance.CheckResult`); `connection.GrpcConnection` is the lockstep
gRPC connection the checks run over; `cli` is the `platform-check` command.
"""
