"""The gateway's settings, read from `PLATFORM_*` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platform_bus.ticket_setting import StepTicketSecretFields
from pydantic import Field, SecretStr, field_validator, model_validator
from platform_contracts.log_lines import LogFormat
from pydantic_settings import BaseSettings, SettingsConfigDict

from platform_gateway.identity.oidc import parse_role_map


class Settings(BaseSettings, StepTicketSecretFields):
    """Gateway settings. Every field is read from `PLATFORM_<NAME>`."""

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    # Who may call (platform_gateway.identity.authenticator): "none" (with PLATFORM_API_TOKEN set,
    # every /v0 route needs that one shared token: `Authorization: Bearer <token>`, the WebSocket
    # also `?token=`), "token" (API tokens from /v0/tokens, and PLATFORM_ADMIN_TOKEN), or "oidc"
    # (your identity provider's tokens, plus API tokens for scripts).
    auth: Literal["none", "token", "oidc"] = "none"
    api_token: str | None = None
    # "self-hosted": one implicit team ("default") owns everything; "managed": many teams, each
    # seeing only its own sessions, recordings, snapshots, comparisons, WADs and usage
    # (platform_gateway.team_access decides; docs/auth.md).
    mode: Literal["self-hosted", "managed"] = "self-hosted"
    # PLATFORM_AUTH=token: the bootstrap admin's token (it creates the first API tokens).
    admin_token: SecretStr | None = None
    # PLATFORM_AUTH=oidc: the identity provider (its discovery document is under the issuer), the
    # web app's client id, the audience tokens must name (default: the client id), and groups to
    # roles ("platform-admins=admin,ml=member"; no match: member).
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_audience: str = ""
    oidc_role_map: str = ""
    # Where API tokens are kept (PLATFORM_AUTH=token or oidc): the broker's database, its own table.
    database_url: str = "sqlite+aiosqlite:///./data/platform.db"
    # Seconds to wait for the broker and the recorder over NATS (creating a session: create_timeout).
    request_timeout: float = Field(default=10.0, gt=0)
    create_timeout: float = Field(default=60.0, gt=0)
    # Seconds one environment command (reset, step, ...) may take before the stream is dropped.
    env_timeout: float = Field(default=300.0, gt=0)
    # A session's stream to its env host unused for this many seconds is closed (reopened on use).
    stream_idle_timeout: float = Field(default=900.0, gt=0)
    # A session the web app opened for one page (closes_with_page) is closed this many seconds
    # after its last stream closes, unless it records or the page kept it (platform_gateway.page_sessions).
    page_session_grace_s: float = Field(default=60.0, gt=0)
    # ... and this many seconds after its last stream closes once its page said it went away
    # (POST /v0/sessions/{id}/left on pagehide): long enough for a reloaded page to open its stream again.
    page_left_grace_s: float = Field(default=10.0, gt=0)
    # step_ticket_secret (or step_ticket_secret_file), from StepTicketSecretFields: shared with every
    # env host, the gateway signs step tickets with it (its own step links carry one, and
    # POST /v0/sessions/{id}/ticket gives clients one for the direct path).
    # With a secret: whether clients may step over the direct path (false: only through the gateway).
    direct_steps: bool = True
    # Seconds to wait for NATS at start before giving up.
    nats_connect_timeout: float = Field(default=5.0, gt=0)
    # Bounds of the HTTP transport (platform_gateway.transport_bounds). Seconds a request's line and
    # headers may take (from the connection, or from their first byte on a kept-alive connection);
    # seconds a kept-alive connection may sit idle between requests; seconds without a byte of a
    # body; the least average rate of a body in bytes/s once it has taken upload_grace seconds (a
    # WAD upload; 0: none); open connections, HTTP and WebSocket, per client address (0: no bound;
    # behind a reverse proxy every client has the proxy's address). Over a bound: 408, or 503.
    header_timeout: float = Field(default=10.0, gt=0)
    keep_alive_timeout: int = Field(default=5, ge=1)
    body_timeout: float = Field(default=10.0, gt=0)
    min_upload_rate: int = Field(default=8192, ge=0)
    upload_grace: float = Field(default=5.0, ge=0)
    max_connections_per_client: int = Field(default=512, ge=0)
    # A bearer token guarding /metrics (platform_gateway.metrics_endpoint); unset: /metrics is as
    # open as the API (open when it needs no token, else refused).
    metrics_token: SecretStr | None = None
    # uvicorn's WebSocket implementation ("websockets", "websockets-sansio" or "wsproto").
    ws: str = "websockets-sansio"
    log_level: str = "info"
    # uvicorn's access log: a line per HTTP request and WebSocket handshake (off: a REST step would
    # be a line each). Its lines, as uvicorn's others, follow PLATFORM_LOG_FORMAT, tokens redacted.
    access_log: bool = False
    # The gateway's cache (environment previews under `previews/`); `~` is expanded.
    cache_dir: Path = Path("~/.cache/simulusion-platform")
    # Previews made ahead, in the background after start, one at a time (platform_gateway.preview_warmer):
    # "all" (every catalog entry; `platform-server`'s default), env ids separated by commas, or
    # empty: none (each preview is made when first asked for).
    warm_previews: str = ""
    # The web app's build (`npm run build` in web/), served at `/`; relative to the working
    # directory (`make run` runs in the repository). Looked up on each request.
    web_dist: Path = Path("web/dist")
    # Inspect's log viewer for evals' transcripts (platform_gateway.eval_viewer): its static build,
    # `inspect_ai/_view/dist`; unset: the installed inspect_ai's, found without importing it.
    evals_viewer_dist: Path | None = None

    @model_validator(mode="after")
    def _oidc_settings(self) -> Settings:
        if self.auth == "oidc":
            missing = [name for name, value in (("PLATFORM_OIDC_ISSUER", self.oidc_issuer),
                                                ("PLATFORM_OIDC_CLIENT_ID", self.oidc_client_id)) if not value]
            if missing:
                raise ValueError(f"PLATFORM_AUTH=oidc needs {' and '.join(missing)}")
            parse_role_map(self.oidc_role_map)
        return self


    @field_validator("cache_dir", "web_dist")
    @classmethod
    def _expand_user(cls, value: Path) -> Path:
        return value.expanduser()
