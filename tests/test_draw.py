"""chronicle/draw.py: what a render worker process runs, and what it imports."""

from __future__ import annotations

import json
import subprocess
import sys

from chronicle import draw
from chronicle.render.svg import _vl_version, render_png, render_svg, static_spec

SPEC = {"mark": "line", "data": {"values": [{"x": 0, "y": 1}, {"x": 1, "y": 3}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"},
                     "y": {"field": "y", "type": "quantitative"}}}


def test_a_worker_imports_none_of_chronicles_renderers() -> None:
    # A worker unpickles draw.svg_and_png: that imports chronicle.draw and nothing of
    # chronicle.render (Jinja2, NumPy, the config model: ~0.25 s of each worker's start).
    code = ("import pickle, sys; from chronicle import draw;"
            "pickle.loads(pickle.dumps(draw.svg_and_png));"
            "print(' '.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    ours = [m for m in loaded if m == "chronicle" or m.startswith("chronicle.")]
    assert ours == ["chronicle", "chronicle.draw"]
    assert not {"jinja2", "numpy", "pyarrow", "yaml"} & set(loaded)


def test_the_worker_side_draws_the_bytes_of_render_svg_and_render_png() -> None:
    spec = dict(SPEC)
    svg, png = draw.svg_and_png(static_spec(spec), _vl_version(), True)
    assert svg == render_svg(spec)
    assert png == render_png(svg)
    assert draw.svg_and_png(static_spec(spec), _vl_version(), False) == (svg, None)


def test_static_spec_leaves_the_callers_spec_as_it_was() -> None:
    spec = dict(SPEC)
    before = json.dumps(spec, sort_keys=True)
    static = static_spec(spec)
    assert static["background"] == "white" and isinstance(static["width"], int)
    assert json.dumps(spec, sort_keys=True) == before
