"""Static SVGs of the build-time charts (site/outputs/statics.py): drawn beside the Markdown
conversion, written after the pages, the same bytes as drawing them first; kept in
.cache/chronicle/svgs by spec, so a build whose specs did not change draws none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chronicle.executor import Executor
from chronicle.render.embed import spec_json
from chronicle.render.svg import render_svg
from chronicle.site.build_cache import FORMAT, BuildCache, entry_key
from chronicle.site.outputs.statics import Drawing, chart_specs, svg_key, with_svgs
from tests.support.paths import REPO
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
    # The home page's three cards are drawn at about their card's width (labels readable
    # without JavaScript on a laptop or a phone); full-width charts at 720 px.
    for name in ("prediction", "dropping", "risks"):
        assert re.search(r'^<svg[^>]* width="360"', (site / "home" / f"{name}.svg").read_text(
            encoding="utf-8"))
    assert re.search(r'^<svg[^>]* width="720"', (site / "charts" / "loss.svg").read_text(
        encoding="utf-8"))


OTHER = {**SPEC, "mark": "point"}
# Build a chronicle (English only) in-process and say how many SVGs it drew and how many
# processes it started (an audit hook sees each start: observation, not patching).
BUILD_AND_COUNT = """
import sys
from pathlib import Path
from chronicle.config import load_config
from chronicle.executor import Executor
from chronicle.site.build import build_site
started = []
sys.addaudithook(lambda event, args: started.append(args) if event == "subprocess.Popen"
                 and "chronicle.executor" in args[1] else None)
cached = {}
with Executor(cores=2) as executor:
    build_site(load_config(Path(sys.argv[1])), Path(sys.argv[2]), cached=cached,
               executor=executor)
print(cached["svgs reused"], cached["svgs made"], len(started))
"""


def test_a_kept_svg_is_read_instead_of_drawn(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"a.vl.json": spec_json(SPEC), "b.vl.json": spec_json(OTHER)}
    first = Drawing(files, BuildCache(tmp_path))
    assert first.drawn == 2
    svgs = first.svgs()
    assert svgs == {"a.svg": render_svg(SPEC), "b.svg": render_svg(OTHER)}
    again = Drawing(files, BuildCache(tmp_path))
    assert again.drawn == 0 and again.svgs() == svgs and list(again.svgs()) == ["a.svg", "b.svg"]
    # A changed spec has a new key: drawn again, never the old picture.
    wider = {**OTHER, "width": 300}
    changed = Drawing({**files, "b.vl.json": spec_json(wider)}, BuildCache(tmp_path))
    assert changed.drawn == 1 and changed.svgs()["b.svg"] == render_svg(wider) != svgs["b.svg"]
    # A damaged entry is drawn again.
    entry = tmp_path / f"v{FORMAT}-{svg_key(spec_json(SPEC))}.json"
    entry.write_bytes(entry.read_bytes().replace(b"<svg", b"<SVG", 1))
    damaged = Drawing(files, BuildCache(tmp_path))
    assert damaged.drawn == 1 and damaged.svgs() == svgs


def test_the_bench_turns_the_svg_cache_off_through_the_executor(tmp_path: Path) -> None:
    # `python -m bench.speedups` times its row without it: nothing read, nothing kept.
    files: dict[str, str | bytes] = {"a.vl.json": spec_json(SPEC)}
    Drawing(files, BuildCache(tmp_path)).svgs()
    with Executor(without=["svg-cache"]) as off:
        drawing = Drawing(files, BuildCache(tmp_path / "off"), off)
        assert drawing.drawn == 1 and drawing.svgs() == {"a.svg": render_svg(SPEC)}
        assert Drawing(files, BuildCache(tmp_path), off).drawn == 1
    assert not (tmp_path / "off").exists()
    with Executor() as on:
        assert Drawing(files, BuildCache(tmp_path), on).drawn == 0


def test_the_key_is_the_spec_and_what_draws_it(tmp_path: Path) -> None:
    key = svg_key(spec_json(SPEC))
    assert svg_key(spec_json(dict(reversed(SPEC.items())))) == key  # canonical JSON
    assert svg_key(spec_json(OTHER)) != key
    # Not the spec alone: the code, vl-convert and the Vega-Lite release are part of it.
    assert key != entry_key("", files={"spec": spec_json(SPEC).encode()})


def _build_and_count(root: Path, site: Path) -> tuple[int, int, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", BUILD_AND_COUNT, str(root), str(site)],
                         env=env, capture_output=True, text=True, check=True).stdout
    reused, made, workers = (int(x) for x in out.split()[-3:])
    return reused, made, workers


@pytest.mark.slow
def test_a_build_with_every_svg_kept_starts_no_worker(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=2)
    reused, drawn, workers = _build_and_count(made.root, tmp_path / "cold")
    assert reused == 0 and drawn > 10 and workers >= 1
    assert _build_and_count(made.root, tmp_path / "warm") == (drawn, 0, 0)
    cold = {p.relative_to(tmp_path / "cold"): p.read_bytes()
            for p in sorted((tmp_path / "cold").rglob("*")) if p.is_file()}
    warm = {p.relative_to(tmp_path / "warm"): p.read_bytes()
            for p in sorted((tmp_path / "warm").rglob("*")) if p.is_file()}
    assert warm == cold
