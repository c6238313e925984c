"""The build path (site stage), after the build: `chronicle check-site`, the soundness check
the nightly job runs on the built site before it deploys it.

Each check fails with one problem per finding, each naming its file:
- latest-json: api/latest.json is missing or lacks the snapshot id;
- home-freshness: the home page does not say "data as of" and name that snapshot;
- feed-newest-day: the RSS feed is missing, unparsable, or lacks the newest sealed day's
  page;
- no-third-party: a page loads a script or stylesheet (any resource <link>) from another
  host: an archive must still render when third-party CDNs are gone.
It reads the built files only (standard library parsers), never the store.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

HOME = "index.html"
FEED = "feed_rss_created.xml"
LATEST = "api/latest.json"
# <link rel=...> values that only point somewhere and load nothing into the page.
NON_LOADING_RELS = frozenset({
    "alternate", "author", "bookmark", "canonical", "external", "help", "license", "me",
    "next", "nofollow", "noopener", "noreferrer", "prev", "search", "tag",
})
_ABSOLUTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
# The checks, by the name a failure reports (see the module docstring).
CHECKS = ("latest-json", "home-freshness", "feed-newest-day", "no-third-party")
_Fail = Callable[[str], None]  # records one problem of one check


class SiteProblem(NamedTuple):
    """One finding of one check; `detail` names the file and the fix."""

    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


class SiteReport(NamedTuple):
    """What `check_site` found: every problem (none: the site is sound), pages checked."""

    problems: list[SiteProblem]
    pages: int


class _Page(HTMLParser):
    """Collects a page's visible text, its canonical URL and the URLs it loads."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.loads: list[tuple[str, str]] = []  # (tag, url)
        self.canonical: str | None = None
        self._skip = 0  # depth inside <script>/<style>, whose text is not visible

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "script":
            if a.get("src"):
                self.loads.append(("script", a["src"]))
            self._skip += 1
        elif tag == "style":
            self._skip += 1
        elif tag == "link" and a.get("href"):
            rels = set(a.get("rel", "").lower().split())
            if "canonical" in rels:
                self.canonical = a["href"]
            if not rels or not rels <= NON_LOADING_RELS:
                self.loads.append(("link", a["href"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)

    def visible_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def _parse_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    page.close()
    return page


def _host(url: str) -> str:
    return (urlsplit(url.strip()).hostname or "").lower()


def _check_latest(site: Path, fail: _Fail) -> dict[str, object] | None:
    path = site / LATEST
    try:
        latest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"{path}: missing; `chronicle build` writes it from the newest snapshot")
        return None
    except (ValueError, UnicodeDecodeError) as err:
        fail(f"{path}: not valid JSON ({err})")
        return None
    if not isinstance(latest, dict) or not isinstance(latest.get("snapshot"), str):
        fail(f'{path}: has no "snapshot" id string')
        return None
    return latest


def _check_home(site: Path, snapshot: str | None, fail: _Fail) -> set[str]:
    """Check the home page; return the site's own hosts (from its canonical URL)."""
    path = site / HOME
    if not path.is_file():
        fail(f"{path}: missing home page")
        return set()
    page = _parse_page(path)
    text = page.visible_text()
    if "data as of" not in text.lower():
        fail(f'{path}: does not say "data as of"; readers cannot tell how fresh it is')
    if snapshot is not None and snapshot not in text:
        fail(f"{path}: does not name snapshot {snapshot} (from {site / LATEST})")
    return {_host(page.canonical)} - {""} if page.canonical else set()


def _check_feed(site: Path, day: object, fail: _Fail) -> None:
    path = site / FEED
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        fail(f"{path}: missing RSS feed")
        return
    except ET.ParseError as err:
        fail(f"{path}: not well-formed XML ({err})")
        return
    if root.tag != "rss" or root.find("channel") is None:
        fail(f"{path}: not an RSS 2.0 document (<rss><channel>)")
        return
    if not isinstance(day, str):
        return  # nothing sealed yet, so no day page to announce
    # .../days/<day>/ with directory URLs, .../days/<day>.html without them.
    wanted = re.compile(rf"/days/{re.escape(day)}(?:/|/index\.html|\.html)$")
    links = [(el.text or "").strip() for el in root.iterfind("./channel/item/link")]
    links += [(el.text or "").strip() for el in root.iterfind("./channel/item/guid")]
    if not any(wanted.search(link) for link in links):
        fail(
            f"{path}: has no item linking to the newest sealed day's page .../days/{day}/ "
            f"(from {site / LATEST}; {len(root.findall('./channel/item'))} items)"
        )


def _check_external(site: Path, own_hosts: set[str], fail: _Fail) -> int:
    pages = sorted(site.rglob("*.html"))
    for path in pages:
        for tag, url in _parse_page(path).loads:
            if _ABSOLUTE.match(url) and _host(url) not in own_hosts:
                fail(
                    f"{path}: <{tag}> loads {url.strip()} from another host; serve it from "
                    "the site itself (an archive must render when third parties are gone)"
                )
    return len(pages)


def check_site(site: Path) -> SiteReport:
    """Run every check on the built site in `site` (a folder); report all problems at once."""
    problems: list[SiteProblem] = []

    def failing(check: str) -> _Fail:
        return lambda detail: problems.append(SiteProblem(check, detail))

    latest = _check_latest(site, failing("latest-json"))
    snapshot = str(latest["snapshot"]) if latest else None
    own_hosts = _check_home(site, snapshot, failing("home-freshness"))
    day = latest.get("latest_sealed_day") if latest else None
    _check_feed(site, day, failing("feed-newest-day"))
    pages = _check_external(site, own_hosts, failing("no-third-party"))
    return SiteReport(problems, pages)
