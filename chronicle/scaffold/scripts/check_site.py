"""Soundness check of a built chronicle site, run by the nightly job before it deploys.

Usage: python check_site.py SITE_DIR

Fails (exit 1, one line per problem, each naming its file) when
- api/latest.json is missing or lacks the snapshot id;
- the home page does not say "data as of" and name that snapshot;
- the RSS feed is missing, unparsable, or lacks the newest sealed day's page;
- any page loads a script or stylesheet (any resource <link>) from another host: an
  archive must still render when third-party CDNs are gone.
Exit 2 when SITE_DIR is not a folder. Standard library only, so it runs before (and
without) installing chronicle.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
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


def _check_latest(site: Path, problems: list[str]) -> dict[str, object] | None:
    path = site / LATEST
    try:
        latest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path}: missing; `chronicle build` writes it from the newest snapshot")
        return None
    except (ValueError, UnicodeDecodeError) as err:
        problems.append(f"{path}: not valid JSON ({err})")
        return None
    if not isinstance(latest, dict) or not isinstance(latest.get("snapshot"), str):
        problems.append(f'{path}: has no "snapshot" id string')
        return None
    return latest


def _check_home(site: Path, snapshot: str | None, problems: list[str]) -> set[str]:
    """Check the home page; return the site's own hosts (from its canonical URL)."""
    path = site / HOME
    if not path.is_file():
        problems.append(f"{path}: missing home page")
        return set()
    page = _parse_page(path)
    text = page.visible_text()
    if "data as of" not in text.lower():
        problems.append(f'{path}: does not say "data as of"; readers cannot tell how fresh it is')
    if snapshot is not None and snapshot not in text:
        problems.append(f"{path}: does not name snapshot {snapshot} (from {site / LATEST})")
    return {_host(page.canonical)} - {""} if page.canonical else set()


def _check_feed(site: Path, day: object, problems: list[str]) -> None:
    path = site / FEED
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        problems.append(f"{path}: missing RSS feed")
        return
    except ET.ParseError as err:
        problems.append(f"{path}: not well-formed XML ({err})")
        return
    if root.tag != "rss" or root.find("channel") is None:
        problems.append(f"{path}: not an RSS 2.0 document (<rss><channel>)")
        return
    if not isinstance(day, str):
        return  # nothing sealed yet, so no day page to announce
    # .../days/<day>/ with directory URLs, .../days/<day>.html without them.
    wanted = re.compile(rf"/days/{re.escape(day)}(?:/|/index\.html|\.html)$")
    links = [(el.text or "").strip() for el in root.iterfind("./channel/item/link")]
    links += [(el.text or "").strip() for el in root.iterfind("./channel/item/guid")]
    if not any(wanted.search(link) for link in links):
        problems.append(
            f"{path}: has no item linking to the newest sealed day's page .../days/{day}/ "
            f"(from {site / LATEST}; {len(root.findall('./channel/item'))} items)"
        )


def _check_external(site: Path, own_hosts: set[str], problems: list[str]) -> int:
    pages = sorted(site.rglob("*.html"))
    for path in pages:
        for tag, url in _parse_page(path).loads:
            if _ABSOLUTE.match(url) and _host(url) not in own_hosts:
                problems.append(
                    f"{path}: <{tag}> loads {url.strip()} from another host; serve it from "
                    "the site itself (an archive must render when third parties are gone)"
                )
    return len(pages)


def check_site(site: Path) -> tuple[list[str], int]:
    """Return (problems, number of pages checked) for the built site in `site`."""
    problems: list[str] = []
    latest = _check_latest(site, problems)
    snapshot = str(latest["snapshot"]) if latest else None
    own_hosts = _check_home(site, snapshot, problems)
    _check_feed(site, latest.get("latest_sealed_day") if latest else None, problems)
    pages = _check_external(site, own_hosts, problems)
    return problems, pages


def main(argv: list[str] | None = None) -> int:
    """Check the site folder named on the command line; return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: check_site.py SITE_DIR", file=sys.stderr)
        return 2
    site = Path(args[0])
    if not site.is_dir():
        print(f"{site}: not a folder; run `chronicle build` first", file=sys.stderr)
        return 2
    problems, pages = check_site(site)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"site check failed: {len(problems)} problem(s) in {site}", file=sys.stderr)
        return 1
    print(f"site ok: {pages} pages checked in {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
