"""Starting environment instances: the env host's and `platform-check`'s launcher.

- `instance_launch`: one entry point, `launch_instance(LaunchSpec)`, for every kind of entry;
- `instance_processes`: an environment server (`python -m platform_sdk`) as a child process,
  its socket, log and ending;
- `containers`: a catalog entry that is a Docker image, run with `docker run`.

Nothing here is part of the client (the wheel the gateway serves leaves it out).
"""
