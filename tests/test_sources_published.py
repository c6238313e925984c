"""`verify --against URL` reads a published head bounded in time and size
(sources/published.py): a server that sends a byte every little while is cut off at the
deadline however long it would go on, a body over 10 MB is refused whether it announces
its length or not; each ends in one message naming the URL."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator

import pytest

from chronicle.errors import ChronicleError
from chronicle.sources import published
from chronicle.sources.published import MAX_BYTES, fetch_published

HEAD = json.dumps({"head": {"snapshot": "2026-08-23T031700Z", "sha256": "a" * 64}}).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        kind = self.path.strip("/").split("/")[0]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        try:
            if kind == "drip":  # valid JSON in the end, a byte every 0.2 s (~20 s)
                self.send_header("Content-Length", str(len(HEAD)))
                self.end_headers()
                for byte in HEAD:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.2)
            elif kind == "announced":  # says how large it is
                self.send_header("Content-Length", str(MAX_BYTES + 1))
                self.end_headers()
                self.wfile.write(b" " * (1 << 20))
            elif kind == "unannounced":  # no length: read until the server closes
                self.end_headers()
                for _ in range(MAX_BYTES // (1 << 20) + 2):
                    self.wfile.write(b" " * (1 << 20))
        except OSError:
            pass  # the client went away, as it should


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler) as httpd:
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        httpd.shutdown()


def test_a_server_that_drips_is_cut_off_at_the_overall_deadline(
        server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each byte comes long before any per-read timeout: only an overall deadline ends it.
    monkeypatch.setattr(published, "TIMEOUT_SECONDS", 1.0)
    with pytest.raises(ChronicleError) as err:
        fetch_published(server + "drip/latest.json")
    assert str(err.value).startswith(f"--against {server}drip/latest.json: no complete "
                                     "answer within 1 s")


@pytest.mark.parametrize("kind", ["announced", "unannounced"])
def test_a_body_over_10_mb_is_refused(server: str, kind: str) -> None:
    with pytest.raises(ChronicleError) as err:
        fetch_published(f"{server}{kind}/latest.json")
    assert f"--against {server}{kind}/latest.json: " in str(err.value)
    assert "over the 10 MB a chronicle's head can take" in str(err.value)
