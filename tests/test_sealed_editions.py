"""Every edition of a day sealed with it (snapshot/seal.py, render/day_edition.py): the
snapshot that seals a day seals its Chinese page and charts beside the English record, in
the manifest and the chain; a day sealed before the site had Chinese gets its page from
the next snapshot, sealed later and saying so; verify checks them, recompute replays them,
and the build publishes them as sealed (site/outputs/editions.py), never rendering a day.

Real snapshots of the simulated run (tests/support/site_factory.py).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
import yaml

from chronicle.config import load_config
from chronicle.errors import ChronicleError
from chronicle.render.i18n import language
from chronicle.site.outputs.editions import edition_days
from chronicle.site.outputs.inputs import load_inputs
from chronicle.snapshot.recompute import recompute_days
from chronicle.store import Store, edition_page, sha256_bytes, verify_store
from tests.support.site_factory import Simulated, simulated_chronicle, take_night

DAY1, DAY2, DAY3 = "2026-08-20", "2026-08-21", "2026-08-22"


def _front(page: bytes) -> dict:
    return yaml.safe_load(page.decode().split("---\n", 2)[1])


def test_the_snapshot_that_seals_a_day_seals_its_chinese_page_beside_it(
        tmp_path: Path) -> None:
    made = simulated_chronicle(tmp_path / "c", nights=2, planned_days=5)
    store = Store(made.config.docs_dir)
    for snap in store.snapshots():
        for day, files in snap.sealed.items():
            folder = f"days/zh/{day}"
            assert {f"{folder}.md", f"{folder}/loss.vl.json", f"{folder}/loss.svg",
                    f"{folder}/loss.png", f"{folder}/grad_norm.svg"} <= set(files), day
            assert store.edition_sealer(date.fromisoformat(day), "zh") == snap
            page = store.sealed_bytes(f"{folder}.md") or b""
            edition = _front(page)["edition"]
            english = store.sealed_bytes(f"days/{day}.md") or b""
            assert edition["record"] == {"snapshot": snap.id, "sha256": sha256_bytes(english)}
            assert edition["language"] == "zh" and edition["sealed_later"] is None
            assert edition["words"] == language("zh", made.config.root / "locale",
                                                made.config).fingerprint
            text = page.decode()
            assert "关键数字" in text and "与英文记录根据同一组事实一同封存" in text
            # The note is the admonition's body (indented under it), not a paragraph after.
            assert '!!! info "已封存的条目（中文版）"\n    本页是' in text
            # Its charts speak Chinese, drawn from the data the English ones were.
            spec = (store.sealed_bytes(f"{folder}/loss.vl.json") or b"").decode()
            assert "训练损失" in spec
    assert verify_store(store) == []


def test_a_chinese_page_changed_after_sealing_fails_verify(tmp_path: Path) -> None:
    made = simulated_chronicle(tmp_path / "c", nights=1, planned_days=5)
    page = made.config.docs_dir / "days" / "zh" / f"{DAY1}.md"
    page.write_text(page.read_text(encoding="utf-8").replace("关键数字", "关键数据"),
                    encoding="utf-8")
    problems = verify_store(Store(made.config.docs_dir))
    assert [p.path for p in problems] == [f"docs/days/zh/{DAY1}.md"], problems
    # A file put beside the sealed ones, sealed by no manifest, is named too.
    stray = made.config.docs_dir / "days" / "zh" / f"{DAY2}.md"
    stray.write_text("# forged\n", encoding="utf-8")
    said = [p.path for p in verify_store(Store(made.config.docs_dir))]
    assert f"docs/days/zh/{DAY2}.md" in said


@pytest.fixture
def english_first(tmp_path: Path) -> Simulated:
    """Two days sealed while the site was English only; then chronicle.yml gains zh."""
    made = simulated_chronicle(tmp_path / "c", nights=2, planned_days=5, languages=("en",))
    path = made.config.root / "chronicle.yml"
    path.write_text(re.sub(r"languages: \[en\]", "languages: [en, zh]",
                           path.read_text(encoding="utf-8")), encoding="utf-8")
    return Simulated(load_config(made.config.root), made.sim, made.store)


def test_days_sealed_before_chinese_get_their_pages_from_the_next_snapshot(
        english_first: Simulated) -> None:
    made, store = english_first, english_first.store
    assert not (made.config.docs_dir / "days" / "zh").exists()
    # Until then the Chinese edition cannot be built: it names the days and what to run.
    with pytest.raises(ChronicleError) as err:
        edition_days(load_inputs(made.config), language("zh", None, made.config))
    said = str(err.value)
    assert f"2 sealed day(s) ({DAY1} to {DAY2}) have no page in 中文 (zh)" in said
    assert "`chronicle snapshot`" in said and "site.languages" in said
    result = take_night(made, 3)
    assert result.sealed == (DAY3,) and result.editions == (DAY1, DAY2)
    store.refresh()
    newest = store.snapshots()[-1]
    assert sorted(newest.editions) == [DAY1, DAY2]
    for day in (DAY1, DAY2):
        sealer = store.sealed_days()[date.fromisoformat(day)]
        assert sealer != newest  # the day keeps the snapshot that sealed its record
        assert store.edition_sealer(date.fromisoformat(day), "zh") == newest
        page = store.sealed_bytes(edition_page(date.fromisoformat(day), "zh")) or b""
        edition = _front(page)["edition"]
        assert edition["sealed_later"] == newest.id
        assert edition["record"]["snapshot"] == sealer.id
        assert f"由快照 <code>{newest.id}</code> 事后" in page.decode()
    assert set(newest.sealed[DAY3]) >= {f"days/zh/{DAY3}.md", f"days/zh/{DAY3}/loss.png"}
    assert verify_store(store) == []
    report = recompute_days(made.config, store)
    assert report.problems == [], report.problems
    # Days 1-2 were sealed under the English-only chronicle.yml (their pages are not
    # compared byte for byte); day 3's files and the two editions sealed later are.
    assert report.pages_skipped == {"chronicle.yml changed since it was sealed": [DAY1, DAY2]}
    assert report.pages == 1 + 2
    # Nothing is sealed twice: the next night seals no edition again.
    assert take_night(made, 4).editions == ()
    pages = edition_days(load_inputs(made.config), language("zh", None, made.config))
    assert {p for p in pages if p.endswith(".md")} == {
        f"days/{d}.md" for d in (DAY1, DAY2, DAY3, "2026-08-23")}


def test_recompute_compares_an_edition_only_under_the_words_it_was_sealed_with(
        tmp_path: Path) -> None:
    made = simulated_chronicle(tmp_path / "c", nights=2, planned_days=5)
    clean = recompute_days(made.config, made.store)
    assert clean.problems == [] and clean.pages == 2
    # A translation fixed since (the chronicle's own locale/zh.po): the sealed pages keep
    # their words; recompute says it cannot compare them, and finds nothing wrong.
    (made.config.root / "locale").mkdir()
    (made.config.root / "locale" / "zh.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "Key figures"\nmsgstr "要点数字"\n', encoding="utf-8")
    fixed = recompute_days(made.config, Store(made.config.docs_dir))
    assert fixed.problems == [], fixed.problems
    assert fixed.pages_skipped == {
        "its zh page sealed with other words (a translation changed since)": [DAY1, DAY2]}


def test_without_a_chinese_font_nothing_is_sealed_and_the_message_names_the_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The machine's fonts hidden (CHRONICLE_FONT_DIRS: an empty folder): a Chinese chart
    # would be empty boxes, so neither a snapshot nor a build draws one.
    from click.testing import CliRunner

    from chronicle.cli import main
    from tests.support.config import scaffold_simulated

    root = scaffold_simulated(tmp_path / "c")
    (tmp_path / "no-fonts").mkdir()
    monkeypatch.setenv("CHRONICLE_FONT_DIRS", str(tmp_path / "no-fonts"))
    runner = CliRunner()
    for args in (["snapshot", "--dir", str(root), "--as-of", "2026-08-21T03:17:00Z"],
                 ["build", "--dir", str(root)]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        said = result.output
        assert "no Chinese font" in said and "fonts-noto-cjk" in said, said
        assert "CHRONICLE_FONT_DIRS" in said and "site.languages: [en]" in said
        assert "Traceback" not in said
    assert not (root / "docs" / "data").exists() or not any((root / "docs" / "data").iterdir())
    # English only: nothing Chinese is drawn, nothing is asked for.
    path = root / "chronicle.yml"
    path.write_text(re.sub(r"languages: \[en, zh\]", "languages: [en]",
                           path.read_text(encoding="utf-8")), encoding="utf-8")
    done = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of",
                                "2026-08-21T03:17:00Z"])
    assert done.exit_code == 0, done.output
