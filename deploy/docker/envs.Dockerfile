# syntax=docker/dockerfile:1
# simulusion-platform-envs: the environments. The env host and every catalog family (Gymnasium's
# classic control and MuJoCo tasks, DeepMind Control, Atari through ALE, Doom through ViZDoom with
# Freedoom's WADs, the MuJoCo Menagerie robots baked in), with Mesa's EGL and OSMesa for rendering
# without a display; on a GPU (compose.gpu.yaml, a GPU node) MuJoCo renders through NVIDIA's EGL.
#   python -m platform_envhost (the default)
#   python -m platform_sdk --gym-id CartPole-v1 --listen 0.0.0.0:50051 (one environment server,
#   as an env pod runs it)
# Build from the repository root (compose.yaml does: docker compose --profile build build):
#   docker build -f deploy/docker/envs.Dockerfile -t simulusion-platform-envs .
# Runs as uid 10001 in /app; its data (instances' run folders, WAD copies) under /data.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ghcr.io/astral-sh/uv:0.13.9 AS uv

# The env host's virtual environment (it depends on platform-sdk[server] and platform-envs[all]:
# every family's simulator) and the catalog's Menagerie robots.
FROM ${PYTHON_IMAGE} AS builder
COPY --from=uv /uv /bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=0 \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /src
COPY pyproject.toml uv.lock ./
COPY libs ./libs
COPY services ./services
COPY sdk ./sdk
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package platform-envhost
# The robots the built-in catalog uses, downloaded now into Menagerie's cache, then laid out as a
# Menagerie tree (<root>/<robot>/) for MENAGERIE_ROOT: `NAME: PATH` is what the command prints.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN MENAGERIE_CACHE_DIR=/tmp/menagerie-cache /app/.venv/bin/python -m platform_sdk.menagerie \
        | while IFS=': ' read -r robot path; do mkdir -p /opt/menagerie && mv "$path" "/opt/menagerie/$robot"; done \
    && test -n "$(ls -A /opt/menagerie)" \
    && rm -rf /tmp/menagerie-cache

FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="simulusion-platform-envs" \
      org.opencontainers.image.description="Simulusion's environments: the env host and every catalog family (MuJoCo, DeepMind Control, ALE, ViZDoom, the Menagerie robots)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.vendor="Simulusion"
# Headless MuJoCo: Mesa's EGL (llvmpipe on a CPU) and OSMesa, the fallback; the packages
# scripts/install_system_deps.sh installs for the same reason. ViZDoom's wheel needs nothing more.
# DL3008 (pin apt versions) is ignored: Debian's mirrors keep only a release's current security
# versions, so a pinned version stops installing at the next point release; the base image's
# Debian release (bookworm) is what fixes these packages' versions.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libegl1 libegl-mesa0 libgl1 libosmesa6 libgl1-mesa-dri \
    && rm -rf /var/lib/apt/lists/*
# NVIDIA's EGL vendor file, so glvnd finds the driver's libEGL_nvidia that the NVIDIA container
# runtime mounts on a GPU host (unused elsewhere: Mesa's is found instead).
COPY deploy/docker/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json
RUN groupadd --system --gid 10001 platform \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin platform \
    && install -d -o 10001 -g 10001 -m 0750 /data
COPY --from=builder /app/.venv /app/.venv
COPY --from=builder /opt/menagerie /opt/menagerie
ENV PATH="/app/.venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/data \
    MENAGERIE_ROOT=/opt/menagerie \
    PLATFORM_ENVHOST_RUN_DIR=/data/envhost \
    PLATFORM_WADS=/data/wads
WORKDIR /app
USER 10001:10001
# The env host's gRPC step path and step link (PLATFORM_ENVHOST_LISTEN, _STEP_LISTEN), or one
# environment server's --listen port.
EXPOSE 50051 50052
# The env host answers its NATS subject (PLATFORM_ENVHOST_ID must be set); an environment server
# (python -m platform_sdk ... --listen, an env pod) accepts connections on its port.
HEALTHCHECK --interval=15s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "platform_bus.healthcheck"]
CMD ["python", "-m", "platform_envhost"]
