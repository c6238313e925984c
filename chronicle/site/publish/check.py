"""The build path (site stage), after the build: `chronicle check-site`, the soundness check
the nightly job runs on the built site before it deploys it.

Each check fails with one problem per finding, each naming its file:
- latest-json: api/latest.json is missing or lacks the snapshot id;
- home-freshness: the home page does not say "data as of" and name that snapshot;
- feed-newest-day: the RSS feed is missing, unparsable, or lacks the newest sealed day's
  page;
- no-third-party: a page loads a script or stylesheet (any resource <link>) from another
  host: an archive must still render when third-party CDNs are gone;
- editions: an edition the home page announces (`<link rel="alternate" hreflang>`) is
  missing a page whose English twin exists (a build that stopped half-way);
- links: a page links a file of the site that does not exist (every `href` and `src` of
  every page, relative or on the site's own host; other hosts are not fetched).
It reads the built files only (standard library parsers), never the store.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from chronicle.clean import load_json

HOME = "index.html"
FEED = "feed_rss_created.xml"
LATEST = "api/latest.json"
MAX_LATEST_BYTES = 1024 * 1024  # a few hundred bytes as the build writes it
# <link rel=...> values that only point somewhere and load nothing into the page.
NON_LOADING_RELS = frozenset({
    "alternate", "author", "bookmark", "canonical", "external", "help", "license", "me",
    "next", "nofollow", "noopener", "noreferrer", "prev", "search", "tag",
})
_ABSOLUTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # mailto:, javascript:, data:, https:
# The checks, by the name a failure reports (see the module docstring).
CHECKS = ("latest-json", "home-freshness", "feed-newest-day", "no-third-party", "editions",
          "links")
_LISTED = 20  # missing pages named per edition; the rest are counted
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
        self.links: list[str] = []  # every href and src
        self.editions: dict[str, str] = {}  # hreflang -> href
        self.canonical: str | None = None
        self._skip = 0  # depth inside <script>/<style>, whose text is not visible

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        self.links += [a[k] for k in ("href", "src") if a.get(k)]
        if tag == "link" and a.get("hreflang") and a.get("href") \
                and "alternate" in a.get("rel", "").lower().split():
            self.editions[a["hreflang"]] = a["href"]
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
        latest = load_json(path.read_bytes() if path.stat().st_size <= MAX_LATEST_BYTES
                           else b"", MAX_LATEST_BYTES)
    except FileNotFoundError:
        fail(f"{path}: missing; `chronicle build` writes it from the newest snapshot")
        return None
    except (OSError, ValueError) as err:
        fail(f"{path}: not valid JSON ({err})")
        return None
    if not isinstance(latest, dict) or not isinstance(latest.get("snapshot"), str):
        fail(f'{path}: has no "snapshot" id string')
        return None
    return latest


def _check_home(site: Path, snapshot: str | None, fail: _Fail) -> _Page | None:
    """Check the home page; return it parsed (None when it is missing)."""
    path = site / HOME
    if not path.is_file():
        fail(f"{path}: missing home page")
        return None
    page = _parse_page(path)
    text = page.visible_text()
    if "data as of" not in text.lower():
        fail(f'{path}: does not say "data as of"; readers cannot tell how fresh it is')
    if snapshot is not None and snapshot not in text:
        fail(f"{path}: does not name snapshot {snapshot} (from {site / LATEST})")
    return page


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


def _check_external(path: Path, page: _Page, own_hosts: set[str], fail: _Fail) -> None:
    for tag, url in page.loads:
        if _ABSOLUTE.match(url) and _host(url) not in own_hosts:
            fail(
                f"{path}: <{tag}> loads {url.strip()} from another host; serve it from "
                "the site itself (an archive must render when third parties are gone)"
            )


def _edition_roots(site: Path, home: _Page | None) -> dict[str, str]:
    """Return {language: its folder under the site} of each translated edition the home
    page announces (an hreflang alternate that is another page of this site)."""
    roots: dict[str, str] = {}
    for lang, href in (home.editions if home else {}).items():
        if _SCHEME.match(href) or _ABSOLUTE.match(href):
            continue
        folder = posixpath.dirname(posixpath.normpath(urlsplit(href).path))
        if folder not in ("", ".") and not folder.startswith(".."):
            roots[lang] = folder + "/"
    return roots


def _check_editions(site: Path, pages: list[Path], roots: dict[str, str], fail: _Fail) -> None:
    """Every page of the English edition has its twin in each translated edition."""
    english = [p.relative_to(site).as_posix() for p in pages]
    english = [p for p in english if not p.startswith(tuple(roots.values()))]
    for lang, root in sorted(roots.items()):
        missing = [p for p in english if not (site / root / p).is_file()]
        for rel in missing[:_LISTED]:
            fail(f"{site / root / rel}: missing; the {lang} edition has no twin of "
                 f"{site / rel}: rebuild the site (`chronicle build` publishes only "
                 "complete sites)")
        if len(missing) > _LISTED:
            fail(f"{site / root}: ... and {len(missing) - _LISTED} more pages of the "
                 f"English edition have no {lang} twin")


def _target(site: Path, page: Path, url: str, base: str | None) -> Path | None:
    """Return the file of the site that `url` (a link on `page`) names, or None when it
    names none to check: another host, a path outside the site's own URL, a fragment of
    the page, mailto:, javascript:... `base` is the site's URL (its canonical one)."""
    url = url.strip()
    if base and url.startswith(base):
        url = "/" + url[len(base):]
        prefix = "/"
    else:
        if not url or url.startswith("#") or _SCHEME.match(url) or url.startswith("//"):
            return None
        # A path from the host's root (the 404 page's links) is the site's below its URL.
        prefix = urlsplit(base).path if base else "/"
    path = unquote(urlsplit(url).path)
    if not path:
        return None
    if path.startswith("/"):
        full = posixpath.normpath(path) + ("/" if path.endswith("/") else "")
        if not (full + "/").startswith(prefix) and full != prefix.rstrip("/"):
            return None  # another part of the host: not this site's to check
        rel = posixpath.normpath("./" + full[len(prefix):]) if len(full) > len(prefix) else "."
    else:
        folder = page.parent.relative_to(site).as_posix()
        rel = posixpath.normpath(posixpath.join(folder, path))
    target = site / rel if rel != "." else site
    if path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target


def _check_links(site: Path, path: Path, page: _Page, base: str | None, fail: _Fail) -> None:
    root = site.resolve()
    for url in dict.fromkeys(page.links):
        target = _target(site, path, url, base)
        if target is None:
            continue
        if not target.resolve().is_relative_to(root):
            fail(f"{path}: links {url.strip()}, outside the site")
        elif not target.is_file():
            fail(f"{path}: links {url.strip()}, which does not exist ({target})")


def check_site(site: Path) -> SiteReport:
    """Run every check on the built site in `site` (a folder); report all problems at once."""
    problems: list[SiteProblem] = []

    def failing(check: str) -> _Fail:
        return lambda detail: problems.append(SiteProblem(check, detail))

    latest = _check_latest(site, failing("latest-json"))
    snapshot = str(latest["snapshot"]) if latest else None
    home = _check_home(site, snapshot, failing("home-freshness"))
    canonical = home.canonical.strip() if home and home.canonical else ""
    own_hosts = {_host(canonical)} - {""}
    # Links to the site's own URL name its files too (the feeds, the canonical links): the
    # home page's URL, up to its folder, is the site's.
    base = canonical.rsplit("/", 1)[0] + "/" if _ABSOLUTE.match(canonical) else None
    day = latest.get("latest_sealed_day") if latest else None
    _check_feed(site, day, failing("feed-newest-day"))
    pages = sorted(site.rglob("*.html"))
    roots = _edition_roots(site, home)
    for path in pages:
        page = _parse_page(path)
        _check_external(path, page, own_hosts, failing("no-third-party"))
        _check_links(site, path, page, base, failing("links"))
    _check_editions(site, pages, roots, failing("editions"))
    problems.sort(key=lambda p: CHECKS.index(p.check))
    return SiteReport(problems, len(pages))
