"""A pod per session: the env host's Kubernetes launcher (`PLATFORM_LAUNCHER=kubernetes`,
docs/kubernetes.md).

- `kube_settings`: the `PLATFORM_KUBE_*` settings;
- `pod_manifests`: the Pod and its Secret (kwargs, uploaded WADs) for a launch spec;
- `pod_states`: what a pod's status says (serving at an address, failed and why);
- `pod_watch`: one watch of this env host's pods, shared by every instance;
- `pod_instances`: a running pod as the env host's `InstanceProcess`;
- `pod_launcher`: create, wait for, claim, delete and reconcile pods.
"""
