"""The `members` table (in PLATFORM_DATABASE_URL, beside `api_tokens`): who signs in through the
identity provider into which team, with which role. One row per subject: the provider's `sub`,
or an email address (matched against the token's `email` claim)."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

members = sa.Table(
    "members",
    metadata,
    sa.Column("subject", sa.String(320), primary_key=True),  # the provider's `sub`, or an email
    sa.Column("team", sa.String(64), nullable=False, index=True),
    sa.Column("role", sa.String(16), nullable=False),  # "admin" or "member"
    sa.Column("added_by", sa.String(200), nullable=False),  # who added it (a token's id, "admin", "oidc:...")
    sa.Column("created_at", sa.Double, nullable=False),
)
