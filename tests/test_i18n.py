"""Message catalogs, the language a page renders in, Chinese number formats and the
translation of sealed English text (render/i18n.py, render/translate.py, render/terms.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chronicle.analysis.prediction import infer
from chronicle.config.default_checks import DEFAULT_CHECKS
from chronicle.render import fmt_date, fmt_duration, fmt_hours, fmt_si, fmt_time, fmt_usd, fmt_zh
from chronicle.render.i18n import LOCALE_DIR, gettext, load_catalog, ngettext, use_language
from chronicle.render.terms import term
from chronicle.render.translate import translate_spec, translate_svg, translate_text
from tests.support.catalog import extract, read, translated

HAN = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDERS = re.compile(r"\{[a-z_]+\}|%\([a-z_]+\)s")


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


def test_catalogs_are_text_compiled_in_memory() -> None:
    assert not list(LOCALE_DIR.rglob("*.mo"))
    with use_language("zh"):
        assert gettext("Key figures") == "关键数字"
        assert ngettext("Archived in %(count)s snapshot, first %(first)s, last %(last)s.",
                        "Archived in %(count)s snapshots, first %(first)s, last %(last)s.",
                        2).startswith("存档于")
    assert gettext("Key figures") == "Key figures"  # English outside the block


def test_a_chronicles_own_catalog_wins(tmp_path: Path) -> None:
    (tmp_path / "zh.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset='
                                    'utf-8\\n"\n\nmsgid "Key figures"\nmsgstr "要点"\n',
                                    encoding="utf-8")
    assert load_catalog("zh", tmp_path).gettext("Key figures") == "要点"
    assert load_catalog("zh", tmp_path).gettext("Cost") == "成本"  # the rest: packaged
    with pytest.raises(ValueError, match="not one of"), use_language("fr"):
        pass


@pytest.mark.parametrize(("value", "text"), [
    (3.69e12, "3.69万亿"), (1.938e11, "1938亿"), (18.75e12, "18.75万亿"), (1.7e6, "170万"),
    (2.5e6, "250万"), (9.9996e11, "1万亿"), (12_345, "1.23万"), (950, "950"),
])
def test_chinese_counts_use_wan_and_yi(value: float, text: str) -> None:
    assert fmt_zh(value) == text


def test_formats_follow_the_language() -> None:
    assert (fmt_si(1.938e11, " token"), fmt_usd(7_201_554), fmt_hours(1_700_000)) == \
        ("194B token", "$7,201,554", "1,700,000")
    with use_language("zh"):
        assert fmt_si(1.938e11, " token") == "1938亿 token"
        assert fmt_usd(7_201_554) == "720万美元" and fmt_usd(4.22, 2) == "4.22美元"
        assert fmt_hours(1_700_000) == "170万" and fmt_hours(960) == "960"
        assert fmt_date("2026-09-08") == "2026年9月8日"
        assert fmt_time("2026-09-08T03:17:00Z") == "2026年9月8日 03:17 UTC"
        assert (fmt_duration(7500), fmt_duration(720)) == ("2小时05分", "12分钟")
        assert term("gap", "failure kind") == "中断"
        assert term("open", "issue state") != term("open", "failure end")
        assert term("hand-made", "failure kind") == "hand-made"  # a user's word stays


def test_sealed_sentences_are_translated_user_text_stays() -> None:
    verdicts = [infer({"metric": "eval_loss", "registered": "2026-08-19", "eval_step": 12_000,
                       "low": 2.3, "high": 2.4, "outside_band": outside, "sign": sign})
                for outside, sign in ((False, "on"), (True, "below"), (True, "above"))]
    sealed = [v[k] for v in verdicts if v for k in ("statement", "basis", "falsified_by")]
    sealed += [c.reason for c in DEFAULT_CHECKS]
    sealed += ["Day 12 · 2026-08-31", "no metrics for 1.2 h after step 10900",
               "loss was NaN or inf on 1 logged row(s), steps 27030-27030"]
    with use_language("zh"):
        for text in sealed:
            out = translate_text(text)
            assert HAN.search(out) and not re.search(r"\b(the|of|at|for|on)\b", out), out
        assert translate_text("Day 12 · 2026-08-31") == "第 12 天 · 2026年8月31日"
        assert translate_text("no metrics for 1.2 h after step 10900") == \
            "第 10900 步之后 1小时12分没有指标"
        assert translate_text("Host OOM on replica 2") == "Host OOM on replica 2"
    assert translate_text("Day 12 · 2026-08-31") == "Day 12 · 2026-08-31"


def test_a_chart_is_translated_in_its_spec_and_its_svg() -> None:
    spec = {"title": {"text": "Day 3 · 2026-09-01", "anchor": "start"},
            "datasets": {"series": [{"i": 0, "x": 1, "y": 2}]},
            "layer": [{"data": {"name": "series"},
                       "transform": [{"calculate": '["failures"][datum.i]',
                                      "as": "s"}],
                       "encoding": {"color": {"field": "s", "type": "nominal",
                                              "scale": {"domain": ["failures"]}},
                                    "y": {"field": "y", "type": "quantitative",
                                          "title": "Tokens"}}},
                      {"data": {"values": [{"kind": "gap", "label": "no metrics for 31 min "
                                            "after step 2100"}]}, "mark": "rule"}]}
    svg = ('<svg><text x="1">Day 3 · 2026-09-01</text><text>Sep 02</text>'
           '<text>Wed 02</text><text>September</text><text>2.0M</text></svg>')
    with use_language("zh"):
        out = translate_spec(spec, data_url="../../days/2026-09-01/throughput.vl.json")
        picture = translate_svg(svg)
    assert out["title"]["text"] == "第 3 天 · 2026年9月1日" and out["title"]["anchor"] == "start"
    layer = out["layer"][0]
    assert layer["data"] == {"url": "../../days/2026-09-01/throughput.vl.json",
                             "format": {"type": "json", "property": "datasets.series"}}
    assert "datasets" not in out and out["config"]["locale"]["time"]["shortMonths"][8] == "九月"
    name = layer["encoding"]["color"]["scale"]["domain"][0]
    assert HAN.search(name) and f'["{name}"]' in layer["transform"][0]["calculate"]
    assert layer["encoding"]["y"]["field"] == "y"  # field names are not words
    assert out["layer"][1]["data"]["values"][0]["kind"] == "中断"
    assert layer["encoding"]["y"]["title"] == "Token"
    # Two datasets of one file would be read once by Vega: a line and its band stay inline.
    two = {**spec, "datasets": {"series": [], "bands": []}}
    with use_language("zh"):
        assert translate_spec(two, data_url="x.vl.json")["datasets"] == two["datasets"]
    assert "第 3 天 · 2026年9月1日</text>" in picture and ">九月 02<" in picture
    assert ">周三 02<" in picture and ">九月<" in picture
    assert ">200万<" in picture  # an SI tick label counts in 万 too


def test_a_template_compiled_in_one_language_renders_in_another() -> None:
    # Jinja's optimizer would fold `"open" | term(...)` when it compiles the template, and
    # a compiled template is kept: an edition built after English in one process (or the
    # other way round) would show the word of the language compiled first.
    from datetime import UTC, datetime

    from chronicle.models import FailureRecord
    from chronicle.render.archive_pages import failures_page

    still_open = FailureRecord("slow-io", "issue", datetime(2026, 8, 23, 9, tzinfo=UTC), None,
                               "Checkpoint writes are slow")
    with use_language("en"):
        english = failures_page([still_open], None)
    with use_language("zh"):
        chinese = failures_page([still_open], None)
    with use_language("en"):
        again = failures_page([still_open], None)
    assert "| open |" in english and english == again
    assert "| 未结束 |" in chinese and "| open |" not in chinese
