"""How a page loads on a phone: its largest contentful paint (LCP) and the bytes and
requests that came before it, measured in Debian's chromium through Playwright and the
Chrome DevTools Protocol, on a site served from 127.0.0.1.

The phone profile (PHONE_PROFILE): a 390 px touch screen on a slow 4G link (400 kbit/s
both ways, 400 ms round trip, `Network.emulateNetworkConditions`) with its CPU four times
slower than this machine's (`Emulation.setCPUThrottlingRate`), a cold cache each time.
LCP is read from a PerformanceObserver('largest-contentful-paint') installed before the
page's own scripts; bytes are what the network delivered (`Network.dataReceived` and the
response headers) up to that paint, whatever page, script or worker asked for them.

    python -m tests.support.pageload SITE_DIR [PATH ...]     # index.html, about.html ...
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.browser import PHONE, chromium, serve


@dataclass(frozen=True)
class Profile:
    """A device and its network, as the DevTools Protocol emulates them."""

    viewport: dict[str, int]
    down_kbit: float
    up_kbit: float
    rtt_ms: float
    cpu_slowdown: float


PHONE_PROFILE = Profile(viewport=PHONE, down_kbit=400, up_kbit=400, rtt_ms=400, cpu_slowdown=4)
SETTLE_MS = 4_000  # after `load`, how long nothing new may be painted before LCP is read
LIMIT_MS = 120_000  # a page that has not settled by then is measured as it stands

_OBSERVE_LCP = """
window.__lcp = [];
new PerformanceObserver(list => {
  for (const e of list.getEntries()) window.__lcp.push({
    time: e.startTime, size: e.size, url: e.url || "",
    element: e.element ? e.element.tagName.toLowerCase() +
      (e.element.className && typeof e.element.className === "string"
        ? "." + e.element.className.trim().split(/\\s+/).join(".") : "") : ""});
}).observe({type: "largest-contentful-paint", buffered: true});
"""


@dataclass(frozen=True)
class Load:
    """One page's load: LCP in ms after navigation started, what it painted, and the
    bytes and requests up to it and in all (until the page settled)."""

    path: str
    lcp_ms: float
    lcp_element: str
    bytes_before_lcp: int
    requests_before_lcp: int
    bytes_total: int
    requests_total: int
    urls_before_lcp: tuple[str, ...]
    urls_total: tuple[str, ...]


class _Wire:
    """What the network delivered, from the DevTools Protocol's Network events: bytes by
    arrival time (the protocol's monotonic clock, seconds), and each request's start."""

    def __init__(self, cdp: Any) -> None:
        self.arrivals: list[tuple[float, int]] = []
        self.started: dict[str, tuple[float, str]] = {}
        self.clock_offset: float | None = None  # wall seconds minus monotonic seconds
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.responseReceived", self._headers)
        cdp.on("Network.dataReceived", self._data)

    def _sent(self, event: dict[str, Any]) -> None:
        url = event["request"]["url"]
        if url.startswith("data:"):
            return
        if self.clock_offset is None:
            self.clock_offset = event["wallTime"] - event["timestamp"]
        self.started.setdefault(event["requestId"], (event["timestamp"], url))

    def _headers(self, event: dict[str, Any]) -> None:
        # With dataReceived's chunks, the response's own bytes on the wire are its headers.
        headers = event["response"].get("encodedDataLength") or 0
        if headers > 0:
            self.arrivals.append((event["timestamp"], int(headers)))

    def _data(self, event: dict[str, Any]) -> None:
        self.arrivals.append((event["timestamp"], int(event.get("encodedDataLength") or 0)))

    def until(self, wall_s: float) -> tuple[int, list[str]]:
        """Bytes arrived and URLs requested up to the wall time `wall_s`."""
        at = wall_s - (self.clock_offset or 0.0)
        done = sum(n for t, n in self.arrivals if t <= at)
        return done, [u for t, u in self.started.values() if t <= at]


def measure(browser: Any, url: str, profile: Profile = PHONE_PROFILE) -> Load:
    """Load `url` in a fresh context under `profile`; return its LCP and the bytes and
    requests before it."""
    phone = profile.viewport["width"] < 600
    context = browser.new_context(viewport=profile.viewport, has_touch=phone, is_mobile=phone,
                                  color_scheme="light")
    try:
        page = context.new_page()
        page.add_init_script(_OBSERVE_LCP)
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": profile.rtt_ms,
            "downloadThroughput": profile.down_kbit * 1000 / 8,
            "uploadThroughput": profile.up_kbit * 1000 / 8})
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": profile.cpu_slowdown})
        wire = _Wire(cdp)
        page.goto(url, wait_until="load", timeout=LIMIT_MS)
        _settle(page, wire)
        entries: list[dict[str, Any]] = page.evaluate("window.__lcp")
        origin = page.evaluate("performance.timeOrigin") / 1000.0
        last: dict[str, Any] = entries[-1] if entries else {"time": 0, "element": "", "url": ""}
        lcp_ms = float(last["time"])
        before, urls = wire.until(origin + lcp_ms / 1000.0)
        total, every = wire.until(float("inf"))
        what = str(last["element"]) + (f" {last['url']}" if last["url"] else "")
        return Load(path=url, lcp_ms=lcp_ms, lcp_element=what,
                    bytes_before_lcp=before, requests_before_lcp=len(urls),
                    bytes_total=total, requests_total=len(every),
                    urls_before_lcp=tuple(urls), urls_total=tuple(every))
    finally:
        context.close()


def _settle(page: Any, wire: _Wire) -> None:
    """Wait until neither a paint nor a byte has arrived for SETTLE_MS (LIMIT_MS at most)."""
    started = time.monotonic()
    seen = (-1, -1)
    quiet_since = time.monotonic()
    while time.monotonic() - started < LIMIT_MS / 1000:
        page.wait_for_timeout(500)
        now = (len(wire.arrivals), page.evaluate("window.__lcp.length"))
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_MS / 1000:
            return


@dataclass(frozen=True)
class Summary:
    """The median of several loads of one page."""

    path: str
    lcp_ms: float
    kb_before_lcp: float
    requests_before_lcp: float
    kb_total: float
    lcp_element: str
    rounds: tuple[Load, ...]


def summarise(path: str, loads: Sequence[Load]) -> Summary:
    """Return the medians of `loads` of the page `path`."""
    return Summary(
        path=path,
        lcp_ms=statistics.median(x.lcp_ms for x in loads),
        kb_before_lcp=statistics.median(x.bytes_before_lcp for x in loads) / 1024,
        requests_before_lcp=statistics.median(x.requests_before_lcp for x in loads),
        kb_total=statistics.median(x.bytes_total for x in loads) / 1024,
        lcp_element=loads[-1].lcp_element, rounds=tuple(loads))


def phone_loads(site: Path, paths: Sequence[str], rounds: int = 3,
                profile: Profile = PHONE_PROFILE) -> Iterator[Summary]:
    """Serve `site` on 127.0.0.1 and load each page of `paths` `rounds` times under
    `profile`, pages alternating within a round; yield each page's medians."""
    loads: dict[str, list[Load]] = {p: [] for p in paths}
    with serve(site) as base, chromium() as browser:
        for _ in range(rounds):
            for path in paths:
                loads[path].append(measure(browser, base + path, profile))
    for path in paths:
        yield summarise(path, loads[path])


def rows(summaries: Sequence[Summary], reference: str) -> list[str]:
    """Lines for the bench: each page's LCP and KB before it, as a ratio of the page
    `reference`'s (issue #42's target: within 1.2x)."""
    ref = next(s for s in summaries if s.path == reference)
    out = []
    for s in summaries:
        lcp, kb = s.lcp_ms / ref.lcp_ms, s.kb_before_lcp / ref.kb_before_lcp
        verdict = "met" if max(lcp, kb) <= 1.2 else "MISSED"
        out.append(f"{s.path:<28} LCP {s.lcp_ms / 1000:5.2f} s ({lcp:4.2f}x)  before it "
                   f"{s.kb_before_lcp:6.0f} KB ({kb:4.2f}x), {s.requests_before_lcp:3.0f} requests;"
                   f"  all {s.kb_total:6.0f} KB  target <= 1.2x {reference}  "
                   + ("" if s.path == reference else verdict)
                   + f"  (LCP rounds: {' '.join(f'{x.lcp_ms / 1000:.2f}' for x in s.rounds)})")
    return out


def main(argv: list[str]) -> None:
    site = Path(argv[0])
    paths = argv[1:] or ["index.html", "about.html"]
    summaries = list(phone_loads(site, paths))
    for line in rows(summaries, paths[-1]):
        print(line)
    for s in summaries:
        print(f"{s.path}: LCP element {s.lcp_element}")
        names = (u.rsplit("/", 1)[-1] for u in s.rounds[-1].urls_before_lcp)
        print("  before LCP: " + " ".join(names))


if __name__ == "__main__":
    main(sys.argv[1:])
