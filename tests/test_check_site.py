"""`chronicle check-site` (chronicle/site/publish/check.py), the nightly soundness check of
the built
site, run on small hand-made site folders and on a real build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from chronicle.cli import main
from chronicle.errors import EXIT_FAILURE, EXIT_USAGE
from chronicle.site.publish.check import CHECKS
from tests.support.site_factory import build_site, chronicle_build, make_chronicle

SID = "2026-09-30T031700Z"
DAY = "2026-09-29"
URL = "https://example.org/chronicle/"

HOME = f"""<!doctype html><html><head>
<link rel="canonical" href="{URL}">
<link rel="stylesheet" href="assets/stylesheets/main.css">
<link rel="stylesheet" href="{URL}assets/extra.css">
<link rel="alternate" type="application/rss+xml" href="{URL}feed_rss_created.xml">
<link rel="alternate" hreflang="fr" href="https://fr.example.net/chronicle/">
<script src="assets/javascripts/bundle.js"></script>
<script>var note = "rendered by vega-embed";</script>
</head><body>
<p class="freshness">Data as of 2026-09-30T03:17:00Z · snapshot {SID}</p>
<a href="https://github.com/marin-community/marin/issues/8435">run issue</a>
<img src="https://avatars.example.com/u/1.png" alt="">
</body></html>
"""

DAY_PAGE = f"""<!doctype html><html><head><link rel="canonical" href="{URL}days/{DAY}/">
<script src="../../assets/javascripts/vega-embed.js"></script></head>
<body><h1>Day 41</h1></body></html>
"""


ASSETS = ("assets/stylesheets/main.css", "assets/extra.css", "assets/javascripts/bundle.js",
          "assets/javascripts/vega-embed.js")


def _feed(*days: str) -> str:
    items = "".join(
        f"<item><title>Day {d}</title><link>{URL}days/{d}/</link>"
        f"<guid isPermaLink=\"true\">{URL}days/{d}/</guid></item>"
        for d in days
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>chronicle</title><link>{URL}</link>{items}</channel></rss>"
    )


def _site(tmp_path: Path, *, home: str = HOME, feed: str | None = None,
          latest_day: str | None = DAY, day_page: str = DAY_PAGE) -> Path:
    site = tmp_path / "site"
    (site / "api").mkdir(parents=True)
    (site / "days" / DAY).mkdir(parents=True)
    (site / "index.html").write_text(home, encoding="utf-8")
    (site / "days" / DAY / "index.html").write_text(day_page, encoding="utf-8")
    (site / "feed_rss_created.xml").write_text(
        feed if feed is not None else _feed(DAY, "2026-09-28"), encoding="utf-8")
    latest: dict[str, object] = {
        "snapshot": SID, "taken_at": "2026-09-30T03:17:00Z",
        "latest_sealed_day": latest_day, "stale_sources": [],
    }
    (site / "api" / "latest.json").write_text(json.dumps(latest), encoding="utf-8")
    for asset in ASSETS:  # what the pages link
        (site / asset).parent.mkdir(parents=True, exist_ok=True)
        (site / asset).write_text("/* */", encoding="utf-8")
    return site


def _check(site: Path) -> Result:
    return CliRunner().invoke(main, ["check-site", "--site-dir", str(site)])


def _failed(result: Result) -> list[tuple[str, str]]:
    """Return (check, detail) of each FAIL line; the run must have failed."""
    assert result.exit_code == EXIT_FAILURE, result.output
    *fails, summary = result.stderr.splitlines()
    assert summary.startswith(f"error: site check failed: {len(fails)} problem(s)")
    pairs = [line.removeprefix("FAIL ").split(": ", 1) for line in fails]
    assert all(line.startswith("FAIL ") and check in CHECKS for line, (check, _) in
               zip(fails, pairs, strict=True)), fails
    return [(check, detail) for check, detail in pairs]


def _problems(result: Result) -> list[str]:
    return [detail for _, detail in _failed(result)]


@pytest.mark.parametrize("url_form", ["{d}/", "{d}/index.html", "{d}.html"])
def test_a_sound_site_passes(tmp_path: Path, url_form: str) -> None:
    feed = _feed(DAY, "2026-09-28").replace(f"{DAY}/", url_form.format(d=DAY))
    result = _check(_site(tmp_path, feed=feed))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.startswith(f"site ok: 2 pages checked in {tmp_path / 'site'}")


def test_nothing_sealed_yet_needs_no_feed_item(tmp_path: Path) -> None:
    result = _check(_site(tmp_path, feed=_feed(), latest_day=None))
    assert result.exit_code == 0, result.stderr


def test_home_without_data_as_of_fails(tmp_path: Path) -> None:
    site = _site(tmp_path, home=HOME.replace("Data as of", "Updated"))
    detail = (f'{site / "index.html"}: does not say "data as of"; readers cannot tell how '
              "fresh it is")
    assert _failed(_check(site)) == [("home-freshness", detail)]


def test_data_as_of_hidden_in_a_script_does_not_count(tmp_path: Path) -> None:
    home = HOME.replace("Data as of", "Updated").replace(
        "rendered by vega-embed", "data as of 2026-09-30")
    problems = _problems(_check(_site(tmp_path, home=home)))
    assert len(problems) == 1 and 'does not say "data as of"' in problems[0]


def test_home_naming_another_snapshot_fails(tmp_path: Path) -> None:
    site = _site(tmp_path, home=HOME.replace(SID, "2026-09-29T031700Z"))
    problems = _problems(_check(site))
    assert problems == [
        f"{site / 'index.html'}: does not name snapshot {SID} (from {site / 'api/latest.json'})"
    ]


def test_feed_without_the_newest_sealed_day_fails(tmp_path: Path) -> None:
    site = _site(tmp_path, feed=_feed("2026-09-28", "2026-09-27"))
    failed = _failed(_check(site))
    assert [check for check, _ in failed] == ["feed-newest-day"]
    problems = [detail for _, detail in failed]
    assert problems[0].startswith(f"{site / 'feed_rss_created.xml'}: has no item linking to "
                                  f"the newest sealed day's page .../days/{DAY}/")


@pytest.mark.parametrize("near_miss", [f"{DAY}-notes", f"{DAY}/charts", f"{DAY}.json"])
def test_feed_link_must_be_the_day_page_itself(tmp_path: Path, near_miss: str) -> None:
    feed = _feed("2026-09-28").replace("2026-09-28", near_miss)
    assert len(_problems(_check(_site(tmp_path, feed=feed)))) == 1


def test_missing_or_broken_feed_fails(tmp_path: Path) -> None:
    site = _site(tmp_path, feed="<rss><channel><item></channel></rss>")
    problems = _problems(_check(site))
    assert len(problems) == 1 and problems[0].startswith(
        f"{site / 'feed_rss_created.xml'}: not well-formed XML")
    (site / "feed_rss_created.xml").unlink()
    assert _failed(_check(site)) == [  # and the pages announcing it link a missing file
        ("feed-newest-day", f"{site / 'feed_rss_created.xml'}: missing RSS feed"),
        ("links", f"{site / 'index.html'}: links {URL}feed_rss_created.xml, which does not "
         f"exist ({site / 'feed_rss_created.xml'})")]


@pytest.mark.parametrize("tag", [
    '<script src="https://cdn.jsdelivr.net/npm/vega@5"></script>',
    '<script src="//unpkg.com/vega-embed@6"></script>',
    '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">',
    '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>',
    '<link rel="icon" href="HTTP://CDN.example.com/favicon.png">',
])
def test_a_page_loading_from_another_host_fails(tmp_path: Path, tag: str) -> None:
    site = _site(tmp_path, day_page=DAY_PAGE.replace("</head>", tag + "</head>"))
    failed = _failed(_check(site))
    assert [check for check, _ in failed] == ["no-third-party"]
    problems = [detail for _, detail in failed]
    page = site / "days" / DAY / "index.html"
    assert problems[0].startswith(f"{page}: <{tag[1:tag.index(' ')]}> loads ")
    assert "from another host" in problems[0]


def test_missing_latest_json_fails(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (site / "api" / "latest.json").unlink()
    assert _failed(_check(site)) == [("latest-json", f"{site / 'api/latest.json'}: missing; "
                                      "`chronicle build` writes it from the newest snapshot")]


def test_latest_json_without_snapshot_fails(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (site / "api" / "latest.json").write_text('{"taken_at": "x"}', encoding="utf-8")
    assert _problems(_check(site)) == [f'{site / "api/latest.json"}: has no "snapshot" id string']


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    site = _site(tmp_path, home=HOME.replace("Data as of", "Updated"), feed=_feed("2026-09-01"),
                 day_page=DAY_PAGE.replace("../../assets", "https://cdn.example.com"))
    result = _check(site)
    assert len(_problems(result)) == 3
    assert [check for check, _ in _failed(result)] == [
        "home-freshness", "feed-newest-day", "no-third-party"]
    # The summary names each failed check and the fix.
    assert result.stderr.splitlines()[-1] == (
        f"error: site check failed: 3 problem(s) in {site} (checks home-freshness, "
        "feed-newest-day, no-third-party); fix what each FAIL line names, then "
        "`chronicle build`")


def test_the_site_folder_defaults_to_dir_site(tmp_path: Path) -> None:
    _site(tmp_path)
    result = CliRunner().invoke(main, ["check-site", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"2 pages checked in {tmp_path / 'site'}" in result.stdout


def test_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = _check(tmp_path / "nope")
    assert result.exit_code == EXIT_USAGE
    assert "not a folder; run `chronicle build` first" in result.stderr


def test_a_real_built_chronicle_passes_and_a_broken_one_fails(tmp_path: Path) -> None:
    # The contract with `chronicle build`: api/latest.json, the home page and the feed agree.
    made = make_chronicle(tmp_path / "c", nights=2)
    site = build_site(made.root, tmp_path / "site")
    result = _check(site)
    assert result.exit_code == 0, result.stderr
    latest = json.loads((site / "api" / "latest.json").read_text(encoding="utf-8"))
    assert latest["latest_sealed_day"] == "2026-08-21"
    home = site / "index.html"
    home.write_text(home.read_text(encoding="utf-8").replace(latest["snapshot"], "(none)"),
                    encoding="utf-8")
    assert _problems(_check(site))[0].startswith(f"{home}: does not name snapshot")


def _with_edition(site: Path, lang: str = "zh") -> Path:
    """Add a translated edition of every page of `site` under `lang/`, announced on the
    home page as the language switch does (hreflang)."""
    for page in [p for p in site.rglob("*.html")]:
        twin = site / lang / page.relative_to(site)
        twin.parent.mkdir(parents=True, exist_ok=True)
        twin.write_text("<!doctype html><html><body>译文</body></html>", encoding="utf-8")
    home = site / "index.html"
    home.write_text(home.read_text(encoding="utf-8").replace(
        "</head>", f'<link rel="alternate" href="{lang}/index.html" hreflang="{lang}"></head>'),
        encoding="utf-8")
    return site


def test_a_translated_edition_missing_a_page_fails(tmp_path: Path) -> None:
    site = _with_edition(_site(tmp_path))
    assert _check(site).exit_code == 0
    assert "4 pages checked" in _check(site).stdout
    (site / "zh" / "days" / DAY / "index.html").unlink()
    failed = _failed(_check(site))
    assert failed == [("editions", f"{site / 'zh/days' / DAY / 'index.html'}: missing; the zh "
                       f"edition has no twin of {site / 'days' / DAY / 'index.html'}: rebuild "
                       "the site (`chronicle build` publishes only complete sites)")]


def test_a_whole_missing_edition_is_named_without_listing_every_page(tmp_path: Path) -> None:
    site = _with_edition(_site(tmp_path))
    for i in range(30):
        (site / "days" / f"p{i}.html").write_text("<p>a page</p>", encoding="utf-8")
    import shutil

    shutil.rmtree(site / "zh")
    problems = _failed(_check(site))
    editions = [d for c, d in problems if c == "editions"]
    assert len(editions) == 21 and editions[-1] == (
        f"{site / 'zh'}: ... and 12 more pages of the English edition have no zh twin")
    # The home page's language switch links the missing edition's home page too.
    assert ("links", f"{site / 'index.html'}: links zh/index.html, which does not exist "
            f"({site / 'zh' / 'index.html'})") in problems


@pytest.mark.parametrize("link", [
    '<a href="../../archive.html">', '<img src="loss.svg">', '<a href="days/x.html#top">',
    f'<a href="{URL}days/{DAY}/missing.json">', '<script src="/chronicle/gone.js"></script>',
    '<a href="../../days/">', '<a href="sub%20folder/a.html">',
])
def test_a_link_to_a_file_that_does_not_exist_fails(tmp_path: Path, link: str) -> None:
    site = _site(tmp_path, day_page=DAY_PAGE.replace("<h1>", f"{link}<h1>"))
    failed = _failed(_check(site))
    assert [c for c, _ in failed] == ["links"]
    assert failed[0][1].startswith(f"{site / 'days' / DAY / 'index.html'}: links ")
    assert failed[0][1].endswith(", which does not exist "
                                 f"({failed[0][1].rsplit('(', 1)[1]}")


@pytest.mark.parametrize("link", [
    '<a href="../../index.html">', '<a href="../../">', '<a href="#top">', '<a href="">',
    '<a href="mailto:someone@example.org">', '<a href="https://other.example.net/gone">',
    f'<a href="{URL}feed_rss_created.xml">', '<a href="/chronicle/index.html">',
    '<a href="/elsewhere/not-ours.html">', '<a href="../../index.html?q=1#x">',
    '<a href="javascript:void(0)">', '<img src="data:image/png;base64,AAAA">',
])
def test_links_to_existing_files_or_elsewhere_pass(tmp_path: Path, link: str) -> None:
    site = _site(tmp_path, day_page=DAY_PAGE.replace("<h1>", f"{link}<h1>"))
    result = _check(site)
    assert result.exit_code == 0, result.stderr


def test_a_link_out_of_the_site_fails(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("not published", encoding="utf-8")
    site = _site(tmp_path, day_page=DAY_PAGE.replace("<h1>", '<a href="../../../secret.txt">'
                                                     "<h1>"))
    assert _problems(_check(site)) == [
        f"{site / 'days' / DAY / 'index.html'}: links ../../../secret.txt, outside the site"]


@pytest.mark.slow
def test_a_real_two_edition_site_passes_and_fails_without_a_chinese_page(
        tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=2, languages=("en", "zh"))
    site = chronicle_build(made.root, tmp_path / "site")
    result = _check(site)
    assert result.exit_code == 0, result.stderr
    assert (site / "zh" / "days" / "2026-08-21.html").is_file()
    (site / "zh" / "days" / "2026-08-21.html").unlink()
    failed = _failed(_check(site))
    assert ("editions", f"{site / 'zh/days/2026-08-21.html'}: missing; the zh edition has no "
            f"twin of {site / 'days/2026-08-21.html'}: rebuild the site (`chronicle build` "
            "publishes only complete sites)") in failed
    # ... and the pages that link it (the language switch, the archive) say so too.
    assert any(c == "links" and d.startswith(f"{site / 'days/2026-08-21.html'}: links ")
               for c, d in failed)
