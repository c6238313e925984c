"""A chronicle in English and Chinese: `chronicle build` runs one real mkdocs build --strict
per language, and the site is read back like a reader (and a crawler) would."""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import feedparser
import pytest

from chronicle.config import load_config
from chronicle.store import Store, verify_store
from tests.support.site_factory import Built, chronicle_build, make_chronicle
from tests.support.steps import unformatted_steps

NIGHTS = 3
DATES = ["2026-08-20", "2026-08-21", "2026-08-22"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path]:
    root = tmp_path_factory.mktemp("editions")
    # A NaN loss on the last day: a detected failure, said on the day page and the
    # Failures page from its facts, with its evidence lines.
    made = make_chronicle(root / "c", nights=NIGHTS, languages=("en", "zh"), nan_row=True)
    return made, chronicle_build(made.root, root / "site")


class _Page(HTMLParser):
    """The links, alternates and `lang` of one built page."""

    def __init__(self) -> None:
        super().__init__()
        self.lang = ""
        self.urls: list[str] = []
        self.hreflang: dict[str, str] = {}
        self.switch: dict[str, str] = {}
        self.feeds: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "html":
            self.lang = a.get("lang", "")
        for name in ("href", "src", "data-spec"):
            if a.get(name):
                self.urls.append(a[name])
        if tag == "link" and a.get("rel") == "alternate" and "hreflang" in a:
            self.hreflang[a["hreflang"]] = a["href"]
        if tag == "link" and a.get("type") == "application/rss+xml":
            self.feeds.append(a["href"])
        if tag == "a" and "md-select__link" in a.get("class", ""):
            self.switch[a["hreflang"]] = a["href"]


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _pages(site: Path, zh: bool) -> set[str]:
    base = site / "zh" if zh else site
    out = {p.relative_to(base).as_posix() for p in base.rglob("*.html")}
    return {p for p in out if p != "404.html" and not p.startswith("zh/")}


def _resolve(page: Path, url: str) -> Path:
    return Path(posixpath.normpath((page.parent / url.split("#")[0].split("?")[0]).as_posix()))


def test_every_page_has_its_twin_in_the_other_language(built: tuple[Built, Path]) -> None:
    _, site = built
    english, chinese = _pages(site, zh=False), _pages(site, zh=True)
    assert {f"days/{d}.html" for d in DATES} <= english
    assert {"index.html", "changes.html", "threads/101.html", "health.html"} <= english
    assert english == chinese


def test_lang_attribute_language_switch_and_hreflang_both_ways(
        built: tuple[Built, Path]) -> None:
    _, site = built
    for zh in (False, True):
        for rel in sorted(_pages(site, zh)):
            path = (site / "zh" if zh else site) / rel
            page = _parse(path)
            assert page.lang == ("zh" if zh else "en"), rel
            assert set(page.hreflang) == {"en", "zh"}, rel
            assert page.switch == page.hreflang, rel  # the switch goes where hreflang says
            en, cn = _resolve(path, page.hreflang["en"]), _resolve(path, page.hreflang["zh"])
            assert en == site / rel and cn == site / "zh" / rel, rel


def test_every_link_of_both_editions_resolves(built: tuple[Built, Path]) -> None:
    _, site = built
    broken = []
    pages = {path: _parse(path) for path in sorted(site.rglob("*.html"))}
    for path, page in pages.items():
        if path.name == "404.html":
            continue  # served for any missing URL: its links are absolute
        for url in page.urls:
            if re.match(r"^[a-z]+:|^//", url):
                continue
            target = _resolve(path, url) if url.split("#")[0] else path
            if not target.exists():
                broken.append(f"{path.relative_to(site)} -> {url}")
            elif "#" in url and target.suffix == ".html":
                fragment = unquote(url.split("#", 1)[1])
                if fragment and fragment not in pages[target].ids:
                    broken.append(f"{path.relative_to(site)} -> {url} (no such anchor)")
    assert broken == []


def test_chinese_headings_keep_their_words_as_anchors(built: tuple[Built, Path]) -> None:
    # Python-Markdown's default slugify would give every Chinese heading #_1, #_2...
    _, site = built
    ids = _parse(site / "zh" / "days" / f"{DATES[-1]}.html").ids
    assert {"关键数字", "图表"} <= ids
    assert not any(re.fullmatch(r"_\d+", i) for i in ids), sorted(ids)


def test_published_data_and_the_api_exist_once_at_the_root(built: tuple[Built, Path]) -> None:
    _, site = built
    zh = site / "zh"
    assert not (zh / "data").exists()
    # Of the API, only the signals are the edition's own: their verdicts are sentences.
    assert sorted(p.name for p in (zh / "api").iterdir()) == ["signals.json"]
    assert not (zh / "assets" / "javascripts" / "vega-bundle.js").exists()
    assert not list((zh / "days").glob("*.json")) and not list((zh / "days").glob("*.md"))
    # A Chinese chart is drawn by the same builder from the same data as the sealed one:
    # the same points, its own words.
    spec = json.loads((zh / "days" / DATES[1] / "loss.vl.json").read_text(encoding="utf-8"))
    sealed = json.loads((site / "days" / DATES[1] / "loss.vl.json").read_text(encoding="utf-8"))
    assert spec["datasets"]["series"] == sealed["datasets"]["series"]
    assert re.search(r"[\u4e00-\u9fff]", spec["title"]["text"] + spec["description"])
    assert spec["title"] != sealed["title"] and spec["description"] != sealed["description"]


def _find(node: object, key: str) -> list[object]:
    if isinstance(node, dict):
        return ([node[key]] if key in node else []) + [
            x for v in node.values() for x in _find(v, key)]
    if isinstance(node, list):
        return [x for v in node for x in _find(v, key)]
    return []


class _Text(HTMLParser):
    """The sentences of a page's article, without code and without issue comments (text
    people wrote, shown as written)."""

    SKIP = ("code", "pre", "script", "style")

    def __init__(self) -> None:
        super().__init__()
        self.depth = self.skip = 0
        self.out: list[str] = []
        self.cur: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self.depth += 1
        if self.depth and (tag in self.SKIP or self.skip or "chronicle-comment" in
                           (dict(attrs).get("class") or "")):
            self.skip += 1
        if tag in ("p", "li", "td", "th", "h1", "h2", "h3", "summary", "div"):
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.depth -= 1
        if self.depth and self.skip and tag in (*self.SKIP, "div"):
            self.skip -= 1
        self.flush()

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skip:
            self.cur.append(data)

    def flush(self) -> None:
        if self.cur:
            self.out.append("".join(self.cur).strip())
            self.cur = []


ENGLISH_RUN = re.compile(r"(?:[A-Za-z][A-Za-z'’-]*[ ,;:()]+){3,}[A-Za-z][A-Za-z'’-]*")


def test_chinese_pages_carry_no_english_template_sentence(built: tuple[Built, Path]) -> None:
    made, site = built
    store = Store(made.config.docs_dir)
    # What people wrote stays as written: issue titles, failure records, config names.
    written = [f.what for f in store.load_failures() if not f.detail]  # not detected ones
    written += [t.title for states in store.thread_history().values() for _s, t in states]
    written += [made.config.run.name, made.config.site.title]
    found = []
    for path in sorted((site / "zh").rglob("*.html")):
        text = _Text()
        text.feed(path.read_text(encoding="utf-8"))
        text.flush()
        for sentence in text.out:
            for run in ENGLISH_RUN.findall(sentence):
                if not any(run in w for w in written):
                    found.append(f"{path.relative_to(site)}: {run}")
    assert found == []


def test_every_page_of_both_editions_writes_a_step_with_its_separators(
        built: tuple[Built, Path]) -> None:
    # One step format wherever a reader sees one: "step 6,760", "第 6,760 步", also in a
    # failure's evidence lines. Code, ids, links and people's words stay as written.
    _, site = built
    found, said = [], {}
    for path in sorted(site.rglob("*.html")):
        text = _Text()
        text.feed(path.read_text(encoding="utf-8"))
        text.flush()
        rel = path.relative_to(site).as_posix()
        said[rel] = "\n".join(text.out)
        found += [f"{rel}: {bad}" for sentence in text.out
                  for bad in unformatted_steps(sentence)]
    assert found == []
    # The detected failure and its evidence are there to be checked, in both editions.
    for rel in ("failures.html", "days/2026-08-22.html"):
        assert "on one logged row, at step 6,760" in said[rel], rel
        assert "在第 6,760 步" in said[f"zh/{rel}"], rel
    assert "W&B run run-a step 6,760 at 2026-08-22 " in said["failures.html"]
    assert "W&B run run-a 第 6,760 步，2026年8月22日 " in said["zh/failures.html"]


def test_a_chinese_day_page_names_and_links_the_sealed_entry(built: tuple[Built, Path]) -> None:
    made, site = built
    store = Store(made.config.docs_dir)
    sealers = {d.isoformat(): s for d, s in store.sealed_days().items()}
    for day in DATES:
        html = (site / "zh" / "days" / f"{day}.html").read_text(encoding="utf-8")
        snap = sealers[day]
        sha = snap.sealed[day][f"days/{day}.md"]["sha256"]
        assert snap.id in html and sha in html
        # The sealed sources at their addresses (absolute: no engine takes them for pages).
        url = made.config.site.url
        assert f'href="{url}days/{day}.md"' in html and f'href="../../days/{day}.html"' in html
        assert f'href="{url}days/zh/{day}.md"' in html
        source = site / "days" / f"{day}.md"
        assert hashlib.sha256(source.read_bytes()).hexdigest() == sha


def test_the_chinese_cite_box_names_permalink_sha256_swhid_then_the_snapshot(
        built: tuple[Built, Path]) -> None:
    _, site = built
    index = {d["date"]: d for d in json.loads((site / "api" / "index.json").read_text())["days"]}
    for day in DATES:
        page = (site / "zh" / "days" / f"{day}.html").read_text(encoding="utf-8")
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        block = text[text.index("引用本条目¶"):text.index("数据文件¶")]
        swhid, folder = index[day]["swhid"], index[day]["swhid_dir"]
        order = [block.index(s) for s in (
            "永久链接：", "封存页面的 sha256：",
            f"SWHID：{swhid}，其图表：{folder}（Software Heritage", "快照：")]
        assert order == sorted(order), block
        assert f'href="https://archive.softwareheritage.org/{swhid}"' in page
        assert "DOI" not in block


# Links to a persistent identifier's resolver (the Cite box's SWHID, DOI, archived copy)
# name one fixed version by construction: no capture time to give them.
RESOLVERS = ("https://archive.softwareheritage.org/", "https://doi.org/",
             "https://web.archive.org/web/")


class _Outbound(HTMLParser):
    """The anchors chronicle writes in a page's article to other hosts (not the site's, not
    inside a comment people wrote, not a persistent identifier): their attributes."""

    def __init__(self, site_url: str) -> None:
        super().__init__()
        self.site_url = site_url
        self.stack: list[str] = []  # "article", "comment" or "" per open div/article
        self.links: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("article", "div"):
            self.stack.append("article" if tag == "article" else
                              "comment" if "chronicle-comment" in a.get("class", "") else "")
        inside = "article" in self.stack and "comment" not in self.stack
        if tag == "a" and inside and a.get("href", "").startswith(("http://", "https://")) \
                and not a["href"].startswith((self.site_url, *RESOLVERS)):
            self.links.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("article", "div") and self.stack:
            self.stack.pop()


def test_every_outbound_link_of_a_day_page_is_a_robust_link(built: tuple[Built, Path]) -> None:
    made, site = built
    for day in DATES:
        sealed = json.loads((made.config.docs_dir / "days" / f"{day}.json").read_text())
        for page in (site / "days" / f"{day}.html", site / "zh" / "days" / f"{day}.html"):
            parser = _Outbound(made.config.site.url)
            parser.feed(page.read_text(encoding="utf-8"))
            assert parser.links, f"{page}: the issue thread's links"
            for a in parser.links:
                assert a["data-originalurl"] == a["href"], (page, a)
                # The snapshot the day's threads are as of (here the one that sealed it).
                assert a["data-versiondate"] == sealed["figures_as_of"] == sealed["sealed_at"]
                assert "data-versionurl" not in a  # no memento of an outbound URL here
    # Links within the site carry none.
    text = (site / "days" / f"{DATES[1]}.html").read_text(encoding="utf-8")
    assert text.count("data-versiondate") == text.count("data-originalurl") > 0
    assert not re.search(r'<a href="(?!https?://)[^"]*"[^>]*data-versiondate', text)


def test_the_chinese_feeds_have_one_item_per_sealed_day(built: tuple[Built, Path]) -> None:
    made, site = built
    url = made.config.site.url + "zh/"
    rss = feedparser.parse((site / "zh" / "feed_rss_created.xml").read_bytes())
    assert rss.feed.get("language", "").startswith("zh")
    links = sorted(e.link for e in rss.entries)
    assert links == [f"{url}days/{d}.html" for d in DATES]
    assert all(re.search(r"[\u4e00-\u9fff]", e.title) for e in rss.entries)
    assert all(re.search(r"[\u4e00-\u9fff]", e.summary) for e in rss.entries)
    feed = json.loads((site / "zh" / "feed_json_created.json").read_text(encoding="utf-8"))
    assert sorted(i["url"] for i in feed["items"]) == links
    for rel in _pages(site, zh=True):  # announced on every Chinese page
        path = site / "zh" / rel
        feeds = {_resolve(path, f) for f in _parse(path).feeds}
        assert site / "zh" / "feed_rss_created.xml" in feeds, rel


def test_the_chinese_search_index_is_segmented(built: tuple[Built, Path]) -> None:
    _, site = built
    index = json.loads((site / "zh" / "search" / "search_index.json").read_text("utf-8"))
    assert index["config"]["lang"] == ["zh"]
    assert "\\u200b" in index["config"]["separator"]  # the regex splits on them
    text = " ".join(d["text"] for d in index["docs"])
    assert re.search("[\u4e00-\u9fff]\u200b[\u4e00-\u9fff]", text)  # jieba's word breaks
    english = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    assert english["config"]["lang"] == ["en"]


def test_a_translation_edit_changes_no_sealed_file(built: tuple[Built, Path],
                                                   tmp_path: Path) -> None:
    made, site = built
    docs = made.config.docs_dir
    before = {p: hashlib.sha256(p.read_bytes()).digest() for p in docs.rglob("*") if p.is_file()}
    # A chronicle's own locale/zh.po wins over the packaged catalog.
    (made.root / "locale").mkdir()
    (made.root / "locale" / "zh.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "Cite this entry"\nmsgstr "引用本条（译文已修订）"\n\n'
        'msgid "Key figures"\nmsgstr "要点数字（新译）"\n', encoding="utf-8")
    try:
        again = chronicle_build(made.root, tmp_path / "site")
    finally:
        (made.root / "locale" / "zh.po").unlink()
        (made.root / "locale").rmdir()
    after = {p: hashlib.sha256(p.read_bytes()).digest() for p in docs.rglob("*") if p.is_file()}
    assert after == before
    assert verify_store(Store(docs)) == []
    page = (again / "zh" / "days" / f"{DATES[1]}.html").read_text(encoding="utf-8")
    # The day's Chinese page is sealed: its text keeps the words it was sealed with; what
    # the build adds under it (the citation) speaks the new ones.
    assert "要点数字（新译）" not in page and "关键数字" in page
    assert "引用本条（译文已修订）" in page
    assert "引用本条（译文已修订）" not in (site / "zh" / "days" / f"{DATES[1]}.html").read_text(
        encoding="utf-8")
    # The English edition and every sealed file it serves are the same bytes.
    for rel in (f"days/{DATES[1]}.md", f"days/{DATES[1]}.json", "api/index.json"):
        assert (again / rel).read_bytes() == (site / rel).read_bytes()


def test_english_only_builds_one_edition(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=1)
    assert load_config(made.root).site.languages == ("en",)
    site = chronicle_build(made.root, tmp_path / "site")
    assert not (site / "zh").exists()
    page = _parse(site / "days" / "2026-08-20.html")
    assert page.lang == "en" and page.hreflang == {} and page.switch == {}


class _Labels(HTMLParser):
    """Every text alternative and accessible name of a page (img alt, aria-label, title),
    and the words of its tables' status cells (what a keyword of the record shows as)."""

    def __init__(self) -> None:
        super().__init__()
        self.labels: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "img" and a.get("alt"):
            self.labels.append(a["alt"])
        if a.get("aria-label"):
            self.labels.append(a["aria-label"])


# Keywords of the record whose word a page shows (render/terms.py), as English shows them.
STATUS_WORDS = re.compile(r"\b(open|closed|pass|warn|fail|no-data|upcoming|watching|"
                          r"triggered|passed|consistent|contradicted|unverifiable|gap|fork|"
                          r"loss_spike|nan_loss)\b")


def test_chinese_pages_show_no_english_status_word_label_or_alt_text(
        built: tuple[Built, Path]) -> None:
    made, site = built
    found = []
    for path in sorted((site / "zh").rglob("*.html")):
        page = _Labels()
        page.feed(path.read_text(encoding="utf-8"))
        for label in page.labels:
            # Material's own labels that its zh theme leaves in English are not ours.
            if not re.search(r"[\u4e00-\u9fff]", label) and ENGLISH_RUN.search(label):
                found.append(f"{path.relative_to(site)}: {label[:80]}")
        text = _Text()
        text.feed(path.read_text(encoding="utf-8"))
        text.flush()
        found += [f"{path.relative_to(site)}: {s[:60]}" for s in text.out
                  if STATUS_WORDS.fullmatch(s.strip().strip("*").strip())]
    # ... nor in the text of a chart's static picture (axe cannot read SVG text); the ids
    # of the configured checks are names, shown as they are (the heatmap's rows).
    ids = {c.id for c in made.config.watch.health} | {r.id for r in made.config.watch.risks}
    for svg in sorted((site / "zh").rglob("*.svg")):
        for word in re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text(encoding="utf-8")):
            word = html.unescape(word)
            if word in ids:
                continue
            if STATUS_WORDS.search(word) or (ENGLISH_RUN.search(word) and not any(
                    w in word for w in (made.config.run.name, "W&B"))):
                found.append(f"{svg.relative_to(site)}: {word[:60]}")
    assert found == []
    # Each Chinese chart's static picture says what it shows in Chinese.
    for day in DATES:
        alts = [a for a in _alts(site / "zh" / "days" / f"{day}.html") if "loss" in a.lower()
                or re.search(r"[\u4e00-\u9fff]", a)]
        assert alts and all(re.search(r"[\u4e00-\u9fff]", a) for a in alts), alts


def _alts(path: Path) -> list[str]:
    page = _Labels()
    page.feed(path.read_text(encoding="utf-8"))
    return page.labels


def test_chinese_feed_items_carry_the_png_of_their_own_chart(built: tuple[Built, Path]) -> None:
    made, site = built
    url = made.config.site.url + "zh/"
    items = re.findall(r"<item>.*?</item>",
                       (site / "zh" / "feed_rss_created.xml").read_text(encoding="utf-8"), re.S)
    assert len(items) == len(DATES)
    for item in items:
        body = html.unescape(re.search(r"<description>(.*?)</description>", item, re.S)[1])
        images = re.findall(r'<img src="([^"]+)"', body)
        assert len(images) == 1 and images[0].endswith("/loss.png"), images
        assert images[0].startswith(url + "days/"), images
        png = site / "zh" / images[0][len(url):]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        alt = re.search(r'alt="([^"]+)"', body)
        assert alt and re.search(r"[\u4e00-\u9fff]", alt[1]), alt


def _text(path: Path) -> str:
    """The words of a page as a reader sees them (tags dropped, whitespace collapsed)."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def test_each_signal_says_its_one_verdict_everywhere(built: tuple[Built, Path]) -> None:
    # api/signals.json holds each signal's figures and verdict; the home card, the
    # signal's own page and the newest day's feed item say that verdict word for word,
    # in each language.
    _, site = built
    for base, feed in ((site, "feed_rss_created.xml"), (site / "zh", "feed_rss_created.xml")):
        data = json.loads((base / "api" / "signals.json").read_text(encoding="utf-8"))
        assert data["as_of"] == DATES[-1] and data["language"] == ("zh" if base != site else "en")
        assert {"sequence_length", "p50", "baseline_p50", "baseline", "ratio", "alert"} <= set(
            data["dropping"])
        assert {"fraction", "actual", "predicted", "low", "high", "residual"} <= set(
            data["prediction"])
        assert {"first_fired", "points"} <= set(data["risks"])
        home = _text(base / "index.html")
        pages = {"prediction": _text(base / "prediction.html"),
                 "dropping": _text(base / "throughput.html"),
                 "risks": _text(base / "risks.html")}
        item = next(e for e in feedparser.parse((base / feed).read_bytes()).entries
                    if DATES[-1] in e.link)
        words = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", item.description)))
        for name in ("prediction", "dropping", "risks"):
            verdict = data[name]["verdict"]
            assert verdict and verdict in home, (base, name, verdict)
            assert verdict in pages[name], (base, name)
            # (A feed item says the prediction's and the risks' verdicts once they are
            # configured: tests/test_charts_schema.py's chronicle has them.)
            if name == "dropping":
                assert verdict in words, (base, name)
        for point in data["risks"]["points"]:
            assert point["verdict"] in pages["risks"], point


def test_the_chinese_chrome_and_feed_items_say_their_words_in_chinese(
        built: tuple[Built, Path]) -> None:
    # Words the theme takes from mkdocs.yml (the colour toggle, the heading permalink)
    # and the feed items' own headings were English on every Chinese page.
    _, site = built
    english = ("Dark mode", "Light mode", "Permanent link", "The three signals",
               "The chart as SVG", "Key figures")
    for path in [*sorted((site / "zh").rglob("*.html")),
                 site / "zh" / "feed_rss_created.xml", site / "zh" / "feed_json_created.json"]:
        text = html.unescape(path.read_text(encoding="utf-8"))
        assert not [w for w in english if w in text], path
    home = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert "深色模式" in home or "浅色模式" in home
    day = (site / "zh" / "days" / f"{DATES[0]}.html").read_text(encoding="utf-8")
    assert 'title="永久链接"' in day


class _Visible(HTMLParser):
    """What a reader of a Chinese page sees as text, a block at a time, whitespace collapsed
    as a browser does (a newline inside a paragraph shows as a space), and the attributes
    read aloud or shown on hover. Left out: text people wrote (issue comments and bodies,
    `chronicle-comment`), code, scripts, SVG, and what is marked as English (`lang="en"`:
    the citation of the English record)."""

    SKIP = ("code", "pre", "script", "style", "svg", "template")
    VOID = ("area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr")
    BLOCKS = ("p", "li", "td", "th", "h1", "h2", "h3", "h4", "div", "tr", "summary", "dt",
              "dd", "title", "figcaption", "br", "nav", "header", "footer", "label", "option")

    def __init__(self) -> None:
        super().__init__()
        self.skip = 0
        self.blocks: list[str] = []
        self.attrs: list[str] = []
        self.cur: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in self.BLOCKS:
            self.flush()
        if not self.skip:
            self.attrs += [a[k] for k in ("title", "aria-label", "placeholder", "alt") if a.get(k)]
        if tag in self.VOID:
            return
        if not self.skip and tag == "code":
            self.cur.append("CODE")  # stands for the code, as text beside its neighbours
        if self.skip or tag in self.SKIP or "chronicle-comment" in a.get("class", "") \
                or a.get("lang") == "en":
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.skip and tag not in self.VOID:
            self.skip -= 1
        if tag in self.BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.cur.append(data)

    def flush(self) -> None:
        text = " ".join("".join(self.cur).split())
        if text:
            self.blocks.append(text)
        self.cur = []


HAN = "\u4e00-\u9fff"
FULL_WIDTH = "，。：；、（）！？"
# ASCII punctuation straight after a Han character (a decimal point before a digit is a
# number's); a space on either side of full-width punctuation (" · " is a spaced separator).
ASCII_AFTER_HAN = re.compile(rf"[{HAN}](?:[:;,.!?](?!\d)|\()")
SPACED_FULL_WIDTH = re.compile(rf"(?<!·) [{FULL_WIDTH}]|[{FULL_WIDTH}] (?!·)")


def test_chinese_pages_are_set_in_chinese_typography(built: tuple[Built, Path]) -> None:
    # Chinese sentences were joined with a space (or a line break a browser shows as one),
    # a label's full-width colon was followed by a space, digests used ": (x)" and prices
    # "; .", and the site's English title and Material's "Made with" were on every page.
    made, site = built
    english_title = made.config.site.title
    found = []
    for path in sorted((site / "zh").rglob("*.html")):
        page = _Visible()
        page.feed(path.read_text(encoding="utf-8"))
        page.flush()
        name = path.relative_to(site).as_posix()
        for block in page.blocks:
            for rule in (ASCII_AFTER_HAN, SPACED_FULL_WIDTH):
                found += [f"{name}: …{block[max(0, m.start() - 12):m.end() + 12]}…"
                          for m in rule.finditer(block)]
        found += [f"{name}: English title in {text!r}" for text in (*page.blocks, *page.attrs)
                  if english_title in text]
        found += [f"{name}: {text!r}" for text in page.blocks if text.startswith("Made with")]
    assert found == [], "\n".join(found)
    home = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert f"{made.config.run.name} 训练纪事" in html.unescape(home)
    assert "使用" in home and "制作" in home
