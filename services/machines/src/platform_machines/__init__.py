"""Users' GPU machines over SSH (not built yet)."""
