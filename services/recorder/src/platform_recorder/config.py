"""Settings of the recorder, read from PLATFORM_* environment variables."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from platform_bus.stream_settings import SessionsStreamFields
from platform_s3 import S3Settings
from pydantic import Field
from platform_contracts.log_lines import LogFormat
from pydantic_settings import SettingsConfigDict

from platform_recorder.storage.s3 import check_s3_settings


class Settings(S3Settings, SessionsStreamFields):
    """The recorder's configuration.

    Attributes:
        nats_url: NATS server(s), comma-separated (PLATFORM_NATS_URL).
        recordings: where recordings go (PLATFORM_RECORDINGS): a folder holding one sub-folder per
            recorded session, or `s3://bucket/prefix` (then the s3_* settings of
            platform_s3.S3Settings: PLATFORM_S3_ENDPOINT, _ACCESS_KEY, _SECRET_KEY, _REGION, _SECURE).
        recorder_spool: with S3, the local folder of the open episodes' part files, the durable
            log written before a step is acked (PLATFORM_RECORDER_SPOOL).
        recorder_batch: most step events fetched and made durable per batch.
        recorder_fetch_timeout: seconds one fetch waits for events.
        recorder_ack_wait: seconds JetStream waits for an ack before redelivering.
        recorder_gather: seconds a batch gathers events after its first one (fewer fsyncs).
        recorder_nice: the niceness the recorder runs at (added with os.nice): it is a background
            writer, so on a saturated CPU the stepping processes go first and the recorder
            catches up from JetStream; 0 keeps the default priority.
        recorder_meta_interval: seconds a recording's meta.json may lag behind its finished
            episodes (their events are durable in part files meanwhile); 0: every batch.
        recorder_id: this recorder's name among the recorders sharing the session partitions
            (PLATFORM_RECORDER_ID; default the host's name and the process id).
        recorder_lease_s: seconds a recorder's lease of a partition lasts unrenewed: a dead
            recorder's partitions are taken over this long after its last renewal.
    """

    model_config = SettingsConfigDict(env_prefix="PLATFORM_", extra="ignore")
    # How its log lines are written: text, or json (one JSON object per line; platform_contracts.log_lines).
    log_format: LogFormat = "text"

    nats_url: str = "nats://127.0.0.1:4222"
    recordings: str = "./recordings"
    recorder_spool: Path = Path("./data/recorder-spool")
    recorder_batch: int = Field(256, ge=1, le=10_000)
    recorder_fetch_timeout: float = Field(1.0, gt=0, le=60)
    recorder_ack_wait: float = Field(60.0, ge=5)
    recorder_gather: float = Field(0.2, ge=0, le=5)
    recorder_meta_interval: float = Field(1.0, ge=0, le=60)
    recorder_nice: int = Field(19, ge=0, le=19)
    recorder_id: str = Field("", max_length=128)
    recorder_lease_s: float = Field(10.0, ge=2, le=300)
    # jetstream_replicas, jetstream_max_bytes: from SessionsStreamFields

    @property
    def nats_servers(self) -> list[str]:
        return [s.strip() for s in self.nats_url.split(",") if s.strip()]

    @property
    def recorder_name(self) -> str:
        """PLATFORM_RECORDER_ID, or the host's name and the process id."""
        return self.recorder_id or f"{socket.gethostname()}-{os.getpid()}"

    @property
    def uses_s3(self) -> bool:
        return self.recordings.startswith("s3://")

    def check_required(self) -> None:
        """Raise StorageConfigError naming every setting this configuration needs and lacks, with no
        sensible default (the S3 endpoint and credentials of an `s3://` PLATFORM_RECORDINGS)."""
        if self.uses_s3:
            check_s3_settings(
                self.recordings, self.s3_endpoint, self.s3_access_key, self.s3_secret_key.get_secret_value()
            )
