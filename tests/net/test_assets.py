"""Reading one WARC record out of a published release asset by an HTTP range request (collector/net/assets.py)."""

from __future__ import annotations

import pytest

from collector.net.assets import AssetError, asset_url, read_range
from collector.net.warcread import response_body_of
from testing.farm import Farm
from testing.release_assets import ReleaseAssets

DATA = bytes(range(256)) * 40  # 10,240 bytes, every offset distinguishable


@pytest.fixture(scope="module")
def farm():
    """One farm for the module: each host's shutdown waits out its server's poll."""
    with Farm() as f:
        yield f


@pytest.fixture(scope="module")
def assets(farm):
    storage = ReleaseAssets(farm)
    storage.publish("warc-2026-08-13", "run-000001-043000-abcd.warc.gz", DATA)
    return storage


def test_the_asked_bytes_come_back_through_the_redirect_to_storage(assets):
    url = asset_url(assets.base_url, "warc-2026-08-13", "run-000001-043000-abcd.warc.gz")
    assert read_range(url, 1000, 300) == DATA[1000:1300]
    download, storage = assets.download.seen[-1], assets.storage.seen[-1]
    assert download.headers["Range"] == "bytes=1000-1299"  # asked for exactly the record
    assert storage.path.startswith("/storage/") and storage.headers["Range"] == "bytes=1000-1299"


def test_a_server_that_ignores_range_still_gives_the_right_bytes(farm):
    storage = ReleaseAssets(farm, ignore_ranges=True)
    storage.publish("warc-2026-08-13", "f.warc.gz", DATA)
    assert read_range(asset_url(storage.base_url, "warc-2026-08-13", "f.warc.gz"), 5000, 17) == DATA[5000:5017]


@pytest.mark.parametrize("offset, length, message", [
    (10_240, 10, "416"),   # past the end: 416 Range Not Satisfiable
    (10_200, 100, "bytes 10200-10239"),  # a short answer is not the record
])
def test_a_range_the_file_cannot_give_is_an_error(assets, offset, length, message):
    url = asset_url(assets.base_url, "warc-2026-08-13", "run-000001-043000-abcd.warc.gz")
    with pytest.raises(AssetError, match=message):
        read_range(url, offset, length)


def test_an_asset_the_release_lacks_is_an_error(assets):
    with pytest.raises(AssetError, match="not_found"):
        read_range(asset_url(assets.base_url, "warc-2026-08-13", "missing.warc.gz"), 0, 10)


def test_asset_addresses_quote_tag_and_name():
    assert asset_url("https://github.com/o/r/releases/download/", "warc-2026-08-13", "a b#.warc.gz") == \
        "https://github.com/o/r/releases/download/warc-2026-08-13/a%20b%23.warc.gz"


def test_a_record_read_by_range_is_a_response_record(tmp_path, farm):
    """A response record cut out of a real WARC file by offset and length reads back as its body."""
    from datetime import datetime, timezone

    from collector.net.warc import WarcLog

    warc = WarcLog(tmp_path, 1, datetime(2026, 8, 13, tzinfo=timezone.utc))
    body = "<html><body>র\u200d্যাব</body></html>".encode()
    pointer = warc.write_exchange(
        url="https://x.test/a", method="GET", request_headers=[], request_target="/a", request_body=None,
        status_line="200 OK", protocol="HTTP/1.1", response_headers=[("Content-Type", "text/html; charset=utf-8")],
        body=body, ip=None, when=datetime(2026, 8, 13, tzinfo=timezone.utc))
    warc.close()
    storage = ReleaseAssets(farm)
    storage.publish("warc-2026-08-13", "x.warc.gz", warc.path.read_bytes())
    record = read_range(asset_url(storage.base_url, "warc-2026-08-13", "x.warc.gz"), pointer.offset, pointer.length)
    assert response_body_of(record, "x") == (body, "text/html; charset=utf-8")


def test_a_token_goes_to_the_asset_address_and_never_to_the_storage_it_redirects_to(assets):
    url = asset_url(assets.base_url, "warc-2026-08-13", "run-000001-043000-abcd.warc.gz")
    token = {"Authorization": "Bearer ghp_secret", "Accept": "application/octet-stream"}
    assert read_range(url, 20, 30, headers=token) == DATA[20:50]
    download, storage = assets.download.seen[-1], assets.storage.seen[-1]
    assert download.headers["Authorization"] == "Bearer ghp_secret"  # the API's own origin
    assert storage.headers.get("Authorization") is None  # another port: the signed address is its own credential
    assert storage.headers.get("Accept") != "application/octet-stream"  # nothing given for the API goes on
    assert storage.headers["Range"] == "bytes=20-49"
