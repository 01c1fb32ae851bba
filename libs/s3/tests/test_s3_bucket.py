"""platform_s3 against a real S3 API server (moto's server mode): the PLATFORM_S3_* settings,
a bucket made when missing and opened again as it is, and every bad setting refused with a
message naming the variable to fix."""

from __future__ import annotations

import io

import pytest
from platform_s3 import S3Settings, S3SettingsError, S3UnavailableError, open_bucket, parse_s3_url
from platform_testing.ports import free_port


def test_the_settings_are_read_from_the_platform_s3_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"PLATFORM_S3_ENDPOINT": "minio:9000", "PLATFORM_S3_ACCESS_KEY": "ak",
                        "PLATFORM_S3_SECRET_KEY": "sk", "PLATFORM_S3_REGION": "eu-west-1",
                        "PLATFORM_S3_SECURE": "false"}.items():
        monkeypatch.setenv(name, value)
    settings = S3Settings()
    assert (settings.s3_endpoint, settings.s3_access_key, settings.s3_region, settings.s3_secure) == (
        "minio:9000", "ak", "eu-west-1", False)
    assert settings.s3_secret_key.get_secret_value() == "sk" and "sk" not in repr(settings)


def test_a_missing_bucket_is_made_and_an_existing_one_opened_as_it_is(s3_server) -> None:
    args = (s3_server.endpoint, s3_server.access_key, s3_server.secret_key, s3_server.region, False)
    bucket = open_bucket("s3://platform-s3-made/a/b/", "PLATFORM_WADS", *args)
    assert (bucket.name, bucket.prefix) == ("platform-s3-made", "a/b/")
    assert bucket.description == f"s3://platform-s3-made/a/b/ at {s3_server.endpoint}"
    assert bucket.client.bucket_exists("platform-s3-made")
    bucket.client.put_object("platform-s3-made", "a/b/kept", io.BytesIO(b"x"), 1)
    again = open_bucket("s3://platform-s3-made", "PLATFORM_WADS", f"http://{s3_server.endpoint}",
                        *args[1:4], True)  # the scheme decides TLS, whatever PLATFORM_S3_SECURE says
    assert again.prefix == "" and again.client.stat_object("platform-s3-made", "a/b/kept").size == 1


@pytest.mark.parametrize(
    ("url", "endpoint", "access", "secret", "message"),
    [
        ("s3://b-1/p", "", "k", "s", "PLATFORM_S3_ENDPOINT is required with PLATFORM_WADS=s3://b-1/p"),
        ("s3://b-1/p", "h:9", "", "", "PLATFORM_S3_ACCESS_KEY and PLATFORM_S3_SECRET_KEY are required"),
        ("s3:///p", "h:9", "k", "s", "PLATFORM_WADS='s3:///p': no bucket"),
        ("s3://b-1/a/../b", "h:9", "k", "s", "the prefix 'a/../b' has an empty, '.' or '..' part"),
        ("s3://Bad_Bucket/p", "h:9", "k", "s", "PLATFORM_WADS='s3://Bad_Bucket/p'"),
        ("s3://b-1/p", "ftp://h:9", "k", "s", "PLATFORM_S3_ENDPOINT='ftp://h:9': expected host:port"),
        ("s3://b-1/p", "http://h:9/path", "k", "s", "without a path"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(url: str, endpoint: str, access: str, secret: str, message: str) -> None:
    with pytest.raises(S3SettingsError) as refused:
        open_bucket(url, "PLATFORM_WADS", endpoint, access, secret)
    assert message in str(refused.value)


def test_an_unreachable_endpoint_is_one_line_naming_the_bucket_and_host() -> None:
    endpoint = f"127.0.0.1:{free_port()}"
    with pytest.raises(S3UnavailableError) as refused:
        open_bucket("s3://b-1/p", "PLATFORM_WADS", endpoint, "k", "s", secure=False)
    assert str(refused.value).startswith(f"cannot use the bucket of s3://b-1/p/ at {endpoint}: ")
    assert "\n" not in str(refused.value)


def test_the_prefix_always_ends_in_a_slash_or_is_empty() -> None:
    assert parse_s3_url("s3://b-1", "PLATFORM_RECORDINGS") == ("b-1", "")
    assert parse_s3_url("s3://b-1//x/y//", "PLATFORM_RECORDINGS") == ("b-1", "x/y/")
