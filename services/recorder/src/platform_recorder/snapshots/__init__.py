"""The saved snapshot store (`snapshot_store`) and its NATS API (`snapshots_api`)."""
