"""Message catalogs, the language a page is rendered in, Chinese number formats, and the
record's generated sentences said in another language from their facts (render/i18n.py,
render/record_text.py, render/terms.py)."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pytest

from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.prediction import infer
from chronicle.analysis.series import Series
from chronicle.config.default_checks import DEFAULT_CHECKS
from chronicle.models import FailureRecord
from chronicle.render import fmt_zh
from chronicle.render.i18n import ENGLISH, LOCALE_DIR, language, load_catalog
from chronicle.render.ledger_text import correction_why
from chronicle.render.record_text import (
    check_reason,
    day_title,
    evidence_text,
    failure_text,
    inference_text,
)
from tests.support.catalog import extract, read, translated
from tests.support.ledger import ledger_of
from tests.support.paths import REPO
from tests.support.steps import unformatted_steps

HAN = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDERS = re.compile(r"\{[a-z_]+\}|%\([a-z_]+\)s")
# English a Chinese sentence must not carry (a word of three letters or more).
ENGLISH_WORD = re.compile(r"\b(?!NaN\b|inf\b|sigma\b|UTC\b|W&B\b|run\b)[A-Za-z]{3,}\b")
ZH = language("zh")


def _ids(catalog: object) -> set[tuple[str | None, object]]:
    return {(m.context, m.id) for m in catalog if m.id}  # type: ignore[attr-defined]


def test_every_marked_message_has_a_chinese_translation() -> None:
    code, zh = extract(), read("zh")
    assert len(_ids(code)) > 200
    missing = sorted(str(k) for k in _ids(code) - _ids(zh))
    assert missing == [], "run `make i18n`, then translate the new messages"
    untranslated = [m.id for m in zh if m.id and not translated(m)]
    assert untranslated == []
    unused = sorted(str(k) for k in _ids(zh) - _ids(code))
    assert unused == [], "run `make i18n` to drop messages no code uses any more"


def test_a_translation_keeps_every_placeholder_of_its_message() -> None:
    for m in read("zh"):
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        wanted = set(PLACEHOLDERS.findall(ids[-1]))
        for s in strings:
            assert set(PLACEHOLDERS.findall(s)) == wanted, m.id
            assert s.count("](") == ids[0].count("]("), m.id  # Markdown links kept


def test_catalogs_are_text_compiled_in_memory_and_the_language_is_an_argument() -> None:
    assert not list(LOCALE_DIR.rglob("*.mo"))
    assert ZH.gettext("Key figures") == "关键数字"
    assert ZH.ngettext("Archived in %(count)s snapshot, first %(first)s, last %(last)s.",
                       "Archived in %(count)s snapshots, first %(first)s, last %(last)s.",
                       2).startswith("存档于")
    assert ENGLISH.gettext("Key figures") == "Key figures"
    # Nothing ambient: the module keeps no "current language" a render could read.
    import chronicle.render.i18n as i18n

    assert not any(n in vars(i18n) for n in ("use_language", "_current", "translations"))


def test_the_words_fingerprint_is_the_words_not_the_files_bytes(tmp_path: Path) -> None:
    # `verify --recompute` replays an edition under the words it was sealed with: a
    # catalog whose comments, references and dates alone changed (`make i18n`) says the
    # same words; one changed translation does not.
    packaged = (LOCALE_DIR / "zh" / "LC_MESSAGES" / "chronicle.po").read_text(encoding="utf-8")
    before = language("zh").fingerprint
    same = (tmp_path / "same")
    same.mkdir()
    moved = packaged.replace("Creation-Date: 2026", "Creation-Date: 2031")
    (same / "zh.po").write_text(re.sub(r"(?m)^#: .*$", "#: somewhere/else.py", moved),
                                encoding="utf-8")
    assert language("zh", same).fingerprint == before
    other = (tmp_path / "other")
    other.mkdir()
    (other / "zh.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset='
                                 'utf-8\\n"\n\nmsgid "Key figures"\nmsgstr "要点"\n',
                                 encoding="utf-8")
    assert language("zh", other).fingerprint != before


def test_a_chronicles_own_catalog_wins(tmp_path: Path) -> None:
    (tmp_path / "zh.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset='
                                    'utf-8\\n"\n\nmsgid "Key figures"\nmsgstr "要点"\n',
                                    encoding="utf-8")
    assert load_catalog("zh", tmp_path).gettext("Key figures") == "要点"
    assert load_catalog("zh", tmp_path).gettext("Cost") == "成本"  # the rest: packaged
    assert language("zh", tmp_path).gettext("Key figures") == "要点"
    with pytest.raises(ValueError, match="not one of"):
        language("fr")


@pytest.mark.parametrize(("value", "text"), [
    (3.69e12, "3.69万亿"), (1.938e11, "1938亿"), (18.75e12, "18.75万亿"), (1.7e6, "170万"),
    (2.5e6, "250万"), (9.9996e11, "1万亿"), (12_345, "1.23万"), (950, "950"),
])
def test_chinese_counts_use_wan_and_yi(value: float, text: str) -> None:
    assert fmt_zh(value) == text


def test_formats_follow_the_language() -> None:
    assert (ENGLISH.si(1.938e11, " token"), ENGLISH.usd(7_201_554),
            ENGLISH.hours(1_700_000)) == ("194B token", "$7,201,554", "1,700,000")
    assert ZH.si(1.938e11, " token") == "1938亿 token"
    assert ZH.usd(7_201_554) == "720万美元" and ZH.usd(4.22, 2) == "4.22美元"
    assert ZH.hours(1_700_000) == "170万" and ZH.hours(960) == "960"
    assert ZH.date("2026-09-08") == "2026年9月8日"
    assert ZH.time("2026-09-08T03:17:00Z") == "2026年9月8日 03:17 UTC"
    said = [ZH.duration(s) for s in (7500, 720, 0, 3 * 86400 + 4 * 3600)]
    assert said == ["2 小时 5 分钟", "12 分钟", "0 分钟", "3 天 4 小时"]  # the glossary's form
    assert ZH.term("gap", "failure kind") == "中断"
    assert ZH.term("open", "issue state") != ZH.term("open", "failure end")
    assert ZH.term("hand-made", "failure kind") == "hand-made"  # a user's word stays
    assert ZH.plural(3, "restart") == "3 次重启" and ENGLISH.plural(3, "restart") == "3 restarts"


def _record_sentences() -> tuple[list[FailureRecord], list[dict[str, object]]]:
    """Return failures detected by the real detectors, and inferences made by the real
    `infer`: the English the analysis writes into the record, with their facts."""
    t = np.array([0.0, 60.0, 120.0, 4000.0, 4060.0, 4120.0, 4180.0]) + 1.7e9
    loss = np.array([2.0, 2.0, np.nan, 2.0, 2.0, 2.0, 2.0])
    series = Series(run=np.array(["r"] * 7, dtype=object), step=np.arange(7_220, 7_227),
                    timestamp=t, values={"loss": loss}, bad={"loss": np.isnan(loss)},
                    forks=(), lineage=("r",), raw_keys={"loss": "train/loss"})
    from tests.support.config import make_config

    failures = detect_failures(series, make_config(), datetime.fromtimestamp(t[-1] + 7200,
                                                                            tz=UTC))
    verdicts = [dict(p, inference=infer(p)) for p in (
        {"metric": "eval_loss", "registered": "2026-08-19", "eval_step": 12_000, "low": 2.3,
         "high": 2.4, "outside_band": outside, "sign": sign}
        for outside, sign in ((False, "on"), (True, "below"), (True, "above")))]
    return failures, verdicts


def _words(text: str) -> list[str]:
    """The words of an English sentence without its numbers and units (how a step, a
    duration or a time is written is the renderer's)."""
    return [w for w in re.findall(r"[A-Za-z&]+", re.sub(r"\brow(?:s|\(s\))", "row", text))
            if w not in ("h", "min", "T", "Z", "UTC")]


def test_the_records_sentences_are_said_in_chinese_from_their_facts() -> None:
    failures, verdicts = _record_sentences()
    kinds = {f.kind for f in failures}
    assert {"gap", "nan_loss"} <= kinds, kinds
    for f in failures:
        # English is said from the facts too: the words the detector stored, each step
        # written as every page writes it (7,220; the stored sentence keeps "7220").
        english = failure_text(f, ENGLISH)
        if f.kind == "nan_loss" and f.detail["first"] == f.detail["last"]:
            # One row says its step once (the stored sentence: "steps 7222-7222").
            assert english == f"loss was NaN or inf on one logged row, at step " \
                              f"{f.detail['first']:,}"
        else:
            assert _words(english) == _words(f.what), (english, f.what)
        said = failure_text(f, ZH)
        assert HAN.search(said) and not ENGLISH_WORD.search(said), said
        for key in ("step", "first", "last"):
            if key in f.detail:  # the same facts, steps with thousands separators
                assert f"{f.detail[key]:,}" in english and f"{f.detail[key]:,}" in said
        assert unformatted_steps(english) == unformatted_steps(said) == [], (english, said)
        # ... through the record's JSON too (what a sealed day holds)
        assert failure_text(f.to_json(), ZH) == said
        assert failure_text(f.to_json(), ENGLISH) == english
        # Each evidence line, from the facts stored beside it.
        facts = f.detail["evidence"]
        assert len(facts) == len(f.evidence) and f.evidence
        for lang in (ENGLISH, ZH):
            lines = evidence_text(f, lang)
            assert lines == evidence_text(f.to_json(), lang)
            for fact, line, written in zip(facts, lines, f.evidence, strict=True):
                assert f"{fact['step']:,}" in line and fact["run"] in line, line
                assert str(fact["step"]) in written  # what the record stores, unchanged
                assert unformatted_steps(line) == [] and unformatted_steps(written), line
                assert bool(HAN.search(line)) == lang.zh, line
                assert lang.zh or _words(line) == _words(written), (line, written)
        # A record stored before its evidence carried facts shows it as written.
        before = {**f.to_json(), "detail": {k: v for k, v in f.detail.items()
                                            if k != "evidence"}}
        assert evidence_text(before, ZH) == f.evidence
    for p in verdicts:
        english = inference_text(p, ENGLISH)
        assert english == {k: p["inference"][k] for k in english}  # type: ignore[index]
        for text in inference_text(p, ZH).values():
            assert HAN.search(text) and not ENGLISH_WORD.search(text.replace("eval_loss", "")), text
    for c in DEFAULT_CHECKS:
        record = {"id": c.id, "reason": c.reason}
        assert check_reason(record, ENGLISH) == c.reason
        assert HAN.search(check_reason(record, ZH)), c.id
    # A reason the chronicle wrote, a failure people wrote: as written, in every language.
    assert check_reason({"id": "grad_norm", "reason": "our own words"}, ZH) == "our own words"
    people = FailureRecord("rack-7", "manual", datetime(2026, 9, 2, 4, tzinfo=UTC), None,
                           "Rack 7 lost power")
    assert failure_text(people, ZH) == "Rack 7 lost power"
    assert day_title({"day": 12, "date": "2026-08-31", "title": "Day 12 · 2026-08-31"},
                     ZH) == "第 12 天 · 2026年8月31日"
    correction = {"reason": "3 metric row(s) of this day arrived after it was sealed",
                  "late_rows": 3}
    assert HAN.search(correction_why(correction, ZH))
    # A record sealed before it carried its facts is shown as written, never guessed at.
    assert correction_why({"reason": "old words"}, ZH) == "old words"


def test_charts_are_drawn_in_the_language_they_are_built_in() -> None:
    from chronicle.analysis.series import build_series
    from chronicle.render.day_charts import day_charts
    from chronicle.store.tables import rows_to_table
    from tests.support.config import make_config

    config = make_config()
    t0 = datetime(2026, 8, 19, tzinfo=UTC).timestamp()
    rows = [{"run": "r", "step": i, "timestamp": t0 + 600 * i,
             "train/loss": 3.0 - i / 100, "throughput/total_tokens": 1e9 * i,
             "throughput/tokens_per_second": 2.5e6, "moe/drop_fraction": 0.03,
             "grad/norm/total": 0.3} for i in range(100)]
    series = build_series(rows_to_table(rows), [], config)
    english = day_charts(date(2026, 8, 19), series, [], config, ENGLISH)
    chinese = day_charts(date(2026, 8, 19), series, [], config, ZH)
    assert english["loss"]["title"]["text"] == "Loss, run so far (2026-08-19 shaded)"
    for name, spec in chinese.items():
        # Every string a reader sees: titles, legends, tooltips, marker and span labels.
        words = [v for k, v in _strings(spec) if k in ("title", "text", "subtitle",
                                                       "description", "domain", "what",
                                                       "tag", "label", "t", "k")]
        leaks = [w for w in words if ENGLISH_WORD.search(w) and not HAN.search(w)]
        assert leaks == [], (name, leaks)
        assert HAN.search(spec["description"]), name
        assert spec["config"]["locale"]["time"]["shortMonths"][8] == "9月"
    # The same data: a language changes the words, never the points.
    points = ("series", "bands")  # the other datasets carry words (span and marker names)
    assert [json.dumps(chinese["loss"]["datasets"].get(k)) for k in points] == \
        [json.dumps(english["loss"]["datasets"].get(k)) for k in points]
    assert chinese["loss"]["datasets"]["series"]


def _strings(node: object, key: str = "") -> list[tuple[str, str]]:
    if isinstance(node, str):
        return [(key, node)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, key)]
    if isinstance(node, dict):
        return [s for k, v in node.items() if k != "datasets" for s in _strings(v, k)]
    return []


def test_a_template_compiled_in_one_language_renders_in_another() -> None:
    # Jinja's optimizer would fold `"open" | term(...)` when it compiles the template, and
    # a compiled template is kept: an edition built after English in one process (or the
    # other way round) would show the word of the language compiled first.
    from chronicle.render.archive_pages import failures_page

    still_open = FailureRecord("slow-io", "issue", datetime(2026, 8, 23, 9, tzinfo=UTC), None,
                               "Checkpoint writes are slow")
    ledger = ledger_of([still_open])
    english = failures_page([still_open], None, ENGLISH, ledger)
    chinese = failures_page([still_open], None, ZH, ledger)
    again = failures_page([still_open], None, ENGLISH, ledger)
    assert "09:00 – open</a>" in english and english == again
    assert "09:00 – 未结束</a>" in chinese and "open</a>" not in chinese


def test_no_message_is_marked_inside_an_f_string() -> None:
    # Babel's extractor reads an f-string as one string: a `_("...")` inside one never
    # reaches the catalog, and its words stay English on every Chinese page (as "The
    # three signals" did in every Chinese feed item).
    inside = re.compile(r"""\bf(["']).*\{[^}]*\b(_|gettext|ngettext|N_)\(""")
    found = [f"{path.relative_to(REPO)}:{n}"
             for path in sorted((REPO / "chronicle").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if inside.search(line)]
    assert found == []


def test_chinese_terms_follow_the_glossary() -> None:
    # One term per concept (docs: the zh glossary our readers expect): no translation
    # says a word the glossary replaces, and a change of a share is in 个百分点, not pp.
    from chronicle.render.formats import fmt_points

    avoid = ("加速器时", "有效产出率", "计算步", "事故", "已过去", "拍摄于", "档案", "塌缩",
             "验证损失", "tok/s", "训练运行", "W&B 运行", "Pull request", "pull request")
    said = [m.string for m in read("zh") if m.id and m.string]
    flat = [s if isinstance(s, str) else " ".join(s) for s in said]
    assert [(w, s) for s in flat for w in avoid if w in s] == []
    assert ZH.points(0.0123) == "+1.2 个百分点" and fmt_points(0.0123) == "+1.2 pp"
