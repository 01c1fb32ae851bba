# syntax=docker/dockerfile:1
# simulusion-platform: the control plane. The gateway (with the web app built in), broker,
# recorder, machines and evals services, from this workspace, and no simulator: the environments
# run in simulusion-platform-envs (envs.Dockerfile). The command picks the service:
#   python -m platform_gateway (the default), platform_broker, platform_recorder,
#   platform_machines, platform_evals
# Build from the repository root (compose.yaml does: docker compose --profile build build):
#   docker build -f deploy/docker/platform.Dockerfile -t simulusion-platform .
# Runs as uid 10001 in /app; its data (database, recordings, caches, the SSH key) under /data.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# uv, copied into the builder only.
FROM ghcr.io/astral-sh/uv:0.13.9 AS uv

# The web app: web/ -> dist (npm ci, then tsc and vite as `npm run build` runs them).
FROM node:20-bookworm-slim AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# The services' virtual environment: the lock's exact versions, the workspace's packages installed
# as wheels (not editable), without dev tools.
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
    uv sync --frozen --no-dev --no-editable \
        --package platform-gateway --package platform-broker --package platform-recorder \
        --package platform-machines --package platform-evals

# What runs: the base image, the venv and the web app's build; no uv, no sources, no Node.js.
FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="simulusion-platform" \
      org.opencontainers.image.description="Simulusion's control plane: gateway (REST, WebSocket, web app), broker, recorder, machines and evals services; no simulator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.vendor="Simulusion"
RUN groupadd --system --gid 10001 platform \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin platform \
    && install -d -o 10001 -g 10001 -m 0750 /data
COPY --from=builder /app/.venv /app/.venv
COPY --from=web /src/web/dist /app/web/dist
# Every path the services write is under /data (a volume); the gateway listens on all addresses.
ENV PATH="/app/.venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/data \
    PLATFORM_HOST=0.0.0.0 \
    PLATFORM_WEB_DIST=/app/web/dist \
    PLATFORM_DATABASE_URL=sqlite+aiosqlite:////data/platform.db \
    PLATFORM_RECORDINGS=/data/recordings \
    PLATFORM_RECORDER_SPOOL=/data/recorder-spool \
    PLATFORM_WADS=/data/wads \
    PLATFORM_CACHE_DIR=/data/cache \
    PLATFORM_SSH_KEY=/data/ssh/id_ed25519
WORKDIR /app
USER 10001:10001
EXPOSE 8000
# The service process 1 runs: the gateway's /healthz, the others answer a NATS request.
HEALTHCHECK --interval=15s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-m", "platform_bus.healthcheck"]
CMD ["python", "-m", "platform_gateway"]
