"""The test server the browser checks and the phone bench load pages from
(tests/support/browser.py `serve`): it serves text as GitHub Pages does."""

from __future__ import annotations

import gzip
import urllib.request
from pathlib import Path

from tests.support.browser import serve


def _get(url: str, encoding: str) -> tuple[bytes, str]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.read(), reply.headers.get("Content-Encoding", "")


def test_text_goes_compressed_to_a_browser_that_accepts_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    svg = b"<svg>" + b"<path d='M0,0h1'/>" * 500 + b"</svg>"
    (site / "chart.svg").write_bytes(svg)
    (site / "picture.png").write_bytes(b"\x89PNG" + bytes(200))
    with serve(site, under="c", compress=True) as url:
        body, encoding = _get(url + "chart.svg", "gzip, deflate")
        assert encoding == "gzip" and gzip.decompress(body) == svg and len(body) < len(svg) / 10
        assert _get(url + "chart.svg", "identity") == (svg, "")  # not asked for: plain
        assert _get(url + "picture.png", "gzip") == (b"\x89PNG" + bytes(200), "")
    with serve(site) as url:  # the browser tests' default: as the files are
        assert _get(url + "chart.svg", "gzip") == (svg, "")
