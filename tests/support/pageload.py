"""How a page loads on a phone: its largest contentful paint (LCP) and the bytes and
requests that came before it, measured in Debian's chromium through Playwright and the
Chrome DevTools Protocol, on a site served from 127.0.0.1.

Two profiles of a 390 px touch screen whose CPU is four times slower than this machine's
(`Emulation.setCPUThrottlingRate`), each load in a fresh context (an empty cache, as on a
first visit): PHONE_PROFILE, issue #42's slow 4G (400 kbit/s both ways, 400 ms round
trip, `Network.emulateNetworkConditions`), and LIGHTHOUSE_SLOW_4G, Lighthouse's mobile
default (1.6 Mbit/s down, 750 kbit/s up, 150 ms). LCP is read from a
PerformanceObserver('largest-contentful-paint') installed before the page's own
scripts; bytes are what the network delivered (`Network.dataReceived` and the response
headers) up to that paint, whatever page, script or worker asked for them; blocking time
is the main thread's long tasks past their first 50 ms, until the page settled.
The server is Python's (tests/support/browser.py `serve`), sending text files (HTML, CSS,
JavaScript, JSON, SVG) gzip-compressed as GitHub Pages does: bytes are bytes on the wire.

    python -m tests.support.pageload SITE_DIR [PATH ...]     # index.html ... about.html
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
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
    name: str = ""


PHONE_PROFILE = Profile(viewport=PHONE, down_kbit=400, up_kbit=400, rtt_ms=400, cpu_slowdown=4,
                        name="slow 4G (400 kbit/s, 400 ms)")
LIGHTHOUSE_SLOW_4G = Profile(viewport=PHONE, down_kbit=1638.4, up_kbit=750, rtt_ms=150,
                             cpu_slowdown=4, name="Lighthouse slow 4G (1.6 Mbit/s, 150 ms)")
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
window.__blocking = 0;
new PerformanceObserver(list => {
  for (const e of list.getEntries()) window.__blocking += Math.max(0, e.duration - 50);
}).observe({type: "longtask", buffered: true});
"""


@dataclass(frozen=True)
class Load:
    """One page's load: LCP in ms after navigation started, what it painted, the bytes
    and requests up to it and in all, and the main thread's blocking time (until the page
    settled)."""

    path: str
    lcp_ms: float
    lcp_element: str
    blocking_ms: float
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
        blocking = float(page.evaluate("window.__blocking"))
        return Load(path=url, lcp_ms=lcp_ms, lcp_element=what, blocking_ms=blocking,
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
    blocking_ms: float
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
        blocking_ms=statistics.median(x.blocking_ms for x in loads),
        lcp_element=loads[-1].lcp_element, rounds=tuple(loads))


def page_loads(sites: Mapping[str, Path], paths: Sequence[str], rounds: int = 3,
               profile: Profile = PHONE_PROFILE) -> dict[str, list[Summary]]:
    """Serve each site of `sites` (by name) on 127.0.0.1 and load each page of `paths`
    `rounds` times under `profile`, sites and pages alternating within a round (so the
    machine's drift falls on all alike); return each site's page medians, in `paths` order."""
    loads: dict[tuple[str, str], list[Load]] = {(n, p): [] for n in sites for p in paths}
    with ExitStack() as stack:
        bases = {n: stack.enter_context(serve(site, compress=True)) for n, site in sites.items()}
        browser = stack.enter_context(chromium())
        for _ in range(rounds):
            for name, base in bases.items():
                for path in paths:
                    loads[(name, path)].append(measure(browser, base + path, profile))
    return {n: [summarise(p, loads[(n, p)]) for p in paths] for n in sites}


def rows(summaries: Sequence[Summary], reference: str, label: str = "") -> list[str]:
    """Bench lines: each page's LCP and KB before it, and their ratio to the page
    `reference`'s (issue #42's target: both within 1.2x), its bytes in all and the main
    thread's blocking time; each round's LCP after."""
    ref = next(s for s in summaries if s.path == reference)
    out = []
    for s in summaries:
        lcp, kb = s.lcp_ms / ref.lcp_ms, s.kb_before_lcp / ref.kb_before_lcp
        verdict = "" if s is ref else (
            f"  target <= 1.2x {reference}  {'met' if max(lcp, kb) <= 1.2 else 'MISSED'}")
        out.append(f"{label}{s.path:<22} LCP {s.lcp_ms / 1000:5.2f} s {lcp:4.2f}x  before it "
                   f"{s.kb_before_lcp:4.0f} KB {kb:4.2f}x ({s.requests_before_lcp:2.0f} requests)  "
                   f"all {s.kb_total:5.0f} KB  blocking {s.blocking_ms:5.0f} ms{verdict}  "
                   f"(LCP rounds: {' '.join(f'{x.lcp_ms / 1000:.2f}' for x in s.rounds)})")
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.pageload")
    parser.add_argument("site", type=Path)
    parser.add_argument("paths", nargs="*", default=["index.html", "about.html"],
                        help="pages; the last is the reference (default: index.html about.html)")
    parser.add_argument("--against", type=Path, help="another site to load alternately (before)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lighthouse", action="store_true", help="LIGHTHOUSE_SLOW_4G")
    args = parser.parse_args(argv)
    profile = LIGHTHOUSE_SLOW_4G if args.lighthouse else PHONE_PROFILE
    sites = {"before": args.against, "after": args.site} if args.against else {"": args.site}
    print(f"phone, {profile.name}, CPU {profile.cpu_slowdown:g}x, {args.rounds} rounds")
    for name, summaries in page_loads(sites, args.paths, args.rounds, profile).items():
        for line in rows(summaries, args.paths[-1], f"{name}: " if name else ""):
            print(line)
        for s in summaries:
            names = " ".join(u.rsplit("/", 1)[-1] for u in s.rounds[-1].urls_before_lcp)
            print(f"  {s.path}: LCP {s.lcp_element}; before it: {names}")


if __name__ == "__main__":
    main(sys.argv[1:])
