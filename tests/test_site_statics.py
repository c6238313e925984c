"""Static SVGs of the build-time charts (site/statics.py): drawn beside the Markdown
conversion, written after the pages, the same bytes as drawing them first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronicle.render.embed import spec_json
from chronicle.render.svg import render_svg
from chronicle.site.statics import Drawing, chart_specs, with_svgs
from tests.support.site_factory import build_site, make_chronicle

SPEC = {"mark": "line", "data": {"values": [{"x": 0, "y": 1}, {"x": 1, "y": 2}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"},
                     "y": {"field": "y", "type": "quantitative"}}}


def test_every_published_spec_and_only_specs_get_an_svg(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"charts/a.vl.json": spec_json(SPEC), "index.md": "# x",
                                     "api/index.json": "{}", "b.vl.json": spec_json(SPEC)}
    assert sorted(chart_specs(files)) == ["b.svg", "charts/a.svg"]
    drawn = with_svgs(files)
    assert drawn["charts/a.svg"] == render_svg(SPEC) == drawn["b.svg"]
    Drawing(files).write(tmp_path)
    assert (tmp_path / "charts" / "a.svg").read_text(encoding="utf-8") == render_svg(SPEC)


@pytest.mark.slow
def test_a_built_site_has_the_static_svg_of_every_chart(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=3)
    site = build_site(made.root, tmp_path / "site")
    specs = [p for p in site.rglob("*.vl.json") if p.relative_to(site).parts[0] != "days"]
    assert len(specs) > 10
    for spec in specs:
        svg = spec.with_name(spec.name.removesuffix(".vl.json") + ".svg")
        assert svg.read_text(encoding="utf-8") == render_svg(json.loads(spec.read_text()))
    # The pages point at them.
    assert 'src="charts/loss.svg"' in (site / "charts.html").read_text(encoding="utf-8")
