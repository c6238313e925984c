"""render_day_files: the sealed Markdown page, its front matter, figures and comments."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from chronicle.config import parse_config
from chronicle.render.day import render_day_files, render_day_markdown
from chronicle.render.i18n import ENGLISH, language

CONFIG = parse_config({
    "source": "simulated",
    "run": {"name": "Test Run", "start": "2026-08-20", "planned_days": 100,
            "token_budget": 1.8e13, "accelerators": {"kind": "GB200", "count": 704}},
    "wandb": {"entity": "e", "project": "p"},
    "github": {"repo": "o/r"},
    "site": {"url": "https://example.org/c/"},
}, Path("."))


def make_day(**over: Any) -> dict[str, Any]:
    day: dict[str, Any] = {
        "schema": "chronicle-day/1", "run": "Test Run", "date": "2026-09-29", "day": 42,
        "planned_days": 100, "title": "Day 42 · 2026-09-29",
        "sealed_by": "2026-09-30T031700Z", "sealed_at": "2026-09-30T03:17:00Z",
        "backfilled": False,
        "data": {"rows": 4512, "first": "2026-09-29T00:00:12Z", "last": "2026-09-29T23:59:41Z"},
        "steps": {"first": 163210, "last": 167700, "count": 4490},
        "tokens": {"day": 2.07e11, "cumulative": 7.7e12, "budget": 1.8e13,
                   "budget_fraction": 0.428},
        "phase": "pretraining",
        "loss": {"train_last": 2.31, "train_mean": 2.33, "train_min": 2.29,
                 "train_change": -0.012, "eval_last": None, "eval_step": None, "nan_rows": 0},
        "throughput": {"compute_tokens_per_second_p50": 2.41e6,
                       "sustained_tokens_per_second": 2.39e6, "goodput": 0.99, "mfu_p10": 20.1,
                       "mfu_p50": 21.3, "mfu_p90": 22.0, "mfu_unit": "percent"},
        "moe": {"drop_fraction_p50": 0.004, "drop_fraction_max": 0.012},
        "grad_norm": {"max": 0.42, "p50": 0.21}, "learning_rate": {"last": 3.1e-4},
        "downtime_seconds": 5400.0, "restarts": 1, "runs": ["hero-a", "hero-b"],
        "forks": [{"run": "hero-b", "parent": "hero-a", "step": 165800,
                   "time": "2026-09-29T11:02:00Z"}],
        "accelerator_hours": 16896.0,
        "cost": {"usd": {"spot 2026-11": 71301.1}},
        "cumulative": {"accelerator_hours": 709632.0, "usd": {"spot 2026-11": 1.0},
                       "downtime_seconds": 9000.0},
        "failures": [{"id": "rack-7", "kind": "manual", "source": "manual",
                      "start": "2026-09-29T04:10:00Z", "end": "2026-09-29T06:40:00Z",
                      "duration_seconds": 9000.0, "what": "Rack 7 | lost power",
                      "accelerator_hours_lost": 160.0, "evidence": []}],
        "threads_updated": [{
            "number": 8506, "title": "Status <b>thread</b>",
            "url": "https://github.com/o/r/issues/8506", "labels": ["hero-run"],
            "state": "open",
            "new_comments": [{"id": 1, "author": "alice", "created_at": "2026-09-29T08:00:00Z",
                              "url": "https://github.com/o/r/issues/8506#1",
                              "body": "All good <script>x()</script>"}],
            "edited_comments": [{"id": 2, "author": "bot", "created_at": "2026-09-20T08:00:00Z",
                                 "updated_at": "2026-09-29T09:00:00Z",
                                 "url": "https://github.com/o/r/issues/8506#2",
                                 "body": "rack 7 down", "previous_body": "all racks up"}],
        }],
        "previous": {"date": "2026-09-28", "loss_train_last": 2.322, "tokens_day": 2.0e11,
                     "mfu_p50": 21.0, "goodput": 0.98, "drop_fraction_max": 0.01,
                     "grad_norm_max": 0.4, "downtime_seconds": 0.0},
        "summary": "Day 42 of 100. Train loss ended at 2.310.",
        "charts": {"loss": "days/2026-09-29/loss.vl.json"},
    }
    day.update(over)
    return day


SPEC = {"title": {"text": "Loss, run so far"}, "mark": "line", "data": {"values": []}}


def page(day: dict[str, Any]) -> tuple[dict[str, Any], str]:
    files = render_day_files(day, {"loss": SPEC}, {"loss": "<svg/>"}, CONFIG)
    text = files[f"days/{day['date']}.md"].decode()
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body


def test_files_and_paths() -> None:
    day = make_day()
    files = render_day_files(day, {"loss": SPEC}, {"loss": "<svg/>"}, CONFIG)
    assert sorted(files) == ["days/2026-09-29.json", "days/2026-09-29.md",
                             "days/2026-09-29/loss.svg", "days/2026-09-29/loss.vl.json"]
    assert json.loads(files["days/2026-09-29.json"]) == day
    assert json.loads(files["days/2026-09-29/loss.vl.json"]) == SPEC
    assert files == render_day_files(copy.deepcopy(day), {"loss": SPEC}, {"loss": "<svg/>"},
                                     CONFIG)  # same inputs, same bytes


def test_front_matter_is_what_the_feed_needs() -> None:
    meta, _ = page(make_day())
    assert meta["date"] == datetime(2026, 9, 30, 3, 17, tzinfo=UTC)  # unquoted timestamp
    assert meta["title"] == "Day 42 · 2026-09-29"
    assert meta["description"] == "Day 42 of 100. Train loss ended at 2.310."
    assert meta["image"] == "days/2026-09-29/loss.svg"


def test_body_figures_changes_and_links() -> None:
    _, body = page(make_day())
    assert "| Train loss, last | 2.310 | 2.322 | −0.012 |" in body
    # A share, whatever unit MFU is logged in, and its change in percentage points.
    assert "| MFU p50 | 21.3% | 21.0% | +0.3 pp |" in body
    day = make_day()
    day["throughput"]["mfu_unit"] = "fraction"
    day["throughput"]["mfu_p50"], day["previous"]["mfu_p50"] = 0.213, 0.21
    assert "| MFU p50 | 21.3% | 21.0% | +0.3 pp |" in page(day)[1]
    assert "| Eval loss, latest | — |" in body  # missing is shown as missing, not zero
    assert ('<div class="chronicle-chart" data-spec="2026-09-29/loss.vl.json">'
            '<img src="2026-09-29/loss.svg" alt="Loss, run so far"') in body
    assert "[← Previous day: 2026-09-28](2026-09-28.md)" in body
    assert "Next day" not in body  # the next day does not exist when a page is sealed
    assert "Rack 7 &#124; lost power" in body  # a pipe cannot split the table row
    assert "(2026-09-29.json)" in body


def test_comments_are_sanitised_and_edits_marked() -> None:
    _, body = page(make_day())
    assert "<script" not in body and "Status &lt;b&gt;thread&lt;/b&gt;" in body
    assert "*edited 2026-09-29 09:00 UTC*" in body
    assert "Text before the edit" in body and "all racks up" in body
    alice, bot = body.index("**alice**"), body.index("**bot**")
    assert alice < bot  # ordered by time of the change


def test_first_day_has_no_previous_link_and_nulls_render() -> None:
    day = make_day(previous=None, threads_updated=[], failures=[], phase=None)
    day["loss"] = dict.fromkeys(day["loss"], None) | {"nan_rows": 0}
    day["throughput"] = dict.fromkeys(day["throughput"], None) | {"mfu_unit": "percent"}
    _, body = page(day)
    assert "← Previous day" not in body
    assert "No failure was recorded this day." in body
    assert "| Train loss, last | — | — | — |" in body


def test_charts_and_svgs_must_match() -> None:
    with pytest.raises(ValueError, match="grad_norm"):
        render_day_files(make_day(), {"loss": SPEC}, {"loss": "", "grad_norm": ""}, CONFIG)


def test_a_gap_still_open_is_drawn_as_long_as_it_has_lasted() -> None:
    # Its downtime was named in the legend but drawn with no width (from its last row to
    # its last row).
    from datetime import UTC, datetime, timedelta

    import numpy as np

    from chronicle.analysis.series import Series
    from chronicle.models import FailureRecord
    from chronicle.render.day_charts import run_marks
    from chronicle.render.i18n import ENGLISH
    from tests.support.config import make_config

    t0 = datetime(2026, 8, 21, 6, tzinfo=UTC)
    ts = t0.timestamp() + np.arange(10) * 60.0
    series = Series(step=np.arange(10) * 10, timestamp=ts,
                    run=np.array(["r"] * 10, dtype=object), values={})
    last = datetime.fromtimestamp(float(ts[-1]), tz=UTC)
    gap = FailureRecord("gap-r-90", "gap", last, None, "no metrics since step 90",
                        detail={"step": 90, "seconds": 7200.0})
    marks = run_marks(series, [gap], make_config(), ENGLISH,
                      end=(t0 + timedelta(hours=18)).timestamp())
    [span] = marks.spans
    assert (span.x0, span.x1) == (ts[-1], ts[-1] + 7200.0)
    # Cut at the chart's end.
    [cut] = run_marks(series, [gap], make_config(), ENGLISH, end=ts[-1] + 600).spans
    assert cut.x1 == ts[-1] + 600


def test_outbound_links_are_robust_links_dated_by_the_snapshot_they_are_as_of() -> None:
    day = make_day(figures_as_of="2026-09-30T03:17:00Z",
                   changes=[{"id": "pr-7", "kind": "pull_request", "key": "#7",
                             "time": "2026-09-29T10:00:00Z", "before": None, "after": "Fix",
                             "detail": {"pull_request": {
                                 "url": "https://github.com/o/r/pull/7", "author": "ann"}}}])
    _, body = page(day)
    date = 'data-versiondate="2026-09-30T03:17:00Z"'
    for url, label in (("https://github.com/o/r/issues/8506", "on GitHub"),
                       ("https://github.com/o/r/issues/8506#1", "link"),
                       ("https://github.com/o/r/issues/8506#2", "link"),
                       ("https://github.com/o/r/pull/7", "On GitHub")):
        assert (f'<a href="{url}" data-originalurl="{url}" {date}>{label}</a>') in body
    assert "](https://" not in body  # no plain Markdown link out of the chronicle is left
    assert "data-versionurl" not in body  # no memento is known


def test_a_memento_becomes_the_links_versionurl_and_a_day_without_its_time_stays_plain() -> None:
    from chronicle.render.day import render_day_markdown
    from chronicle.render.i18n import ENGLISH

    url = "https://github.com/o/r/issues/8506"
    memento = f"https://web.archive.org/web/20260930031900/{url}"
    text = render_day_markdown(make_day(figures_as_of="2026-09-30T03:17:00Z"),
                               {"loss": SPEC}, CONFIG, ENGLISH, mementos={url: memento})
    assert (f'<a href="{url}" data-originalurl="{url}" '
            f'data-versiondate="2026-09-30T03:17:00Z" data-versionurl="{memento}">') in text
    # A day sealed before chronicle.day_page/16 records no figures_as_of: plain links.
    _, old = page(make_day())
    assert f"[on GitHub]({url})" in old and "data-versiondate" not in old


def test_an_outbound_url_cannot_break_out_of_its_attributes() -> None:
    from chronicle.render.robust import LinkVersion, outbound_link

    link = outbound_link("x", 'https://e.org/a"b{c}&d', LinkVersion("2026-09-30T03:17:00Z"))
    assert link == ('<a href="https://e.org/a&#34;b%7Bc%7D&amp;d" '
                    'data-originalurl="https://e.org/a&#34;b%7Bc%7D&amp;d" '
                    'data-versiondate="2026-09-30T03:17:00Z">x</a>')
    assert outbound_link("x", "javascript:alert(1)", LinkVersion("2026")) == ""


def test_a_day_without_a_logged_row_says_so_in_both_languages() -> None:

    quiet = make_day(data={"rows": 0, "first": None, "last": None},
                     steps={"first": None, "last": None, "count": 0}, runs=[])
    _, body = page(quiet)
    assert "Phase: **pretraining**. No metric row was logged this day." in body
    assert "from 0 logged rows" not in body and "Steps — to —" not in body
    zh = render_day_markdown(quiet, {"loss": SPEC}, CONFIG, language("zh"))
    assert "这一天没有记录任何指标行。" in zh and "共 0 行记录" not in zh
    one = make_day(data={"rows": 1, "first": "2026-09-29T00:00:12Z",
                         "last": "2026-09-29T00:00:12Z"},
                   steps={"first": 163210, "last": 163210, "count": 1})
    text = render_day_markdown(one, {"loss": SPEC}, CONFIG, ENGLISH)
    assert "Step 163,210 from 1 logged row of W&B runs" in text
    assert "共 1 行记录" in render_day_markdown(one, {"loss": SPEC}, CONFIG, language("zh"))


def test_words_in_the_other_language_are_marked_on_a_day_page() -> None:
    # An English thread title and comment on the Chinese page are read with an English
    # voice; on the English page, only the Chinese one is marked.
    day = make_day()
    day["threads_updated"].append({
        **day["threads_updated"][0], "number": 8507, "title": "机架 7 断电",
        "new_comments": [{**day["threads_updated"][0]["new_comments"][0],
                          "body": "已恢复。"}], "edited_comments": []})
    zh = render_day_markdown(day, {"loss": SPEC}, CONFIG, language("zh"))
    en = render_day_markdown(day, {"loss": SPEC}, CONFIG, ENGLISH)
    assert '### #8506 Status &lt;b&gt;thread&lt;/b&gt; { lang="en" }\n' in zh
    assert '### #8507 机架 7 断电\n' in zh
    assert '<div class="chronicle-comment" lang="en">' in zh
    assert '### #8507 机架 7 断电 { lang="zh" }\n' in en
    assert '### #8506 Status &lt;b&gt;thread&lt;/b&gt;\n' in en
    assert '<div class="chronicle-comment" lang="zh">' in en
