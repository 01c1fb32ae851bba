"""Who is calling: API tokens (`PLATFORM_AUTH=token`, `/v0/tokens`), the admin token that
bootstraps them, and the one decision of every request's identity (`Authenticator`)."""
