"""Reading recordings: `recording_store.RecordingStore`, the one read path (the recordings API's
and the tests'), and the recordings API on NATS (`recordings_api`)."""
