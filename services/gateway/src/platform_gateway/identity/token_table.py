"""The `api_tokens` table (in PLATFORM_DATABASE_URL, beside the broker's sessions): one row per
API token, holding its SHA-256 and never the token itself."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),  # "tok-" and 12 hex digits: what lists and revokes name
    sa.Column("secret_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("owner", sa.String(200), nullable=False),  # who created it (a token's id, "admin", "oidc:<sub>")
    sa.Column("team", sa.String(64), nullable=False, index=True),
    sa.Column("role", sa.String(16), nullable=False),  # "operator", "admin" or "member"
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("last_used_at", sa.Double, nullable=True),
    sa.Column("expires_at", sa.Double, nullable=True),
    sa.Column("revoked_at", sa.Double, nullable=True),
    # the token that made it (revoking that one revokes this one); null when made by the bootstrap
    # token, a signed-in user or an older version
    sa.Column("parent_id", sa.String(32), nullable=True, index=True),
)
# Columns added after the first version: a table an older version made gains them on start.
ADDED_COLUMNS = ("parent_id",)
