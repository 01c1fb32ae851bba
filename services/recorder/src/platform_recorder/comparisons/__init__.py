"""The comparison store (`comparison_store`) and its NATS API (`comparisons_api`)."""
