"""chronicle/workers/draw.py: what a render worker process runs, and what it imports."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chronicle.render.svg import _vl_version, render_png, render_svg, static_spec
from chronicle.workers import draw

SPEC = {"mark": "line", "data": {"values": [{"x": 0, "y": 1}, {"x": 1, "y": 3}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"},
                     "y": {"field": "y", "type": "quantitative"}}}


def test_a_worker_imports_none_of_chronicles_renderers() -> None:
    # A worker unpickles draw.svg_and_png: that imports chronicle.workers.draw and nothing of
    # chronicle.render (Jinja2, NumPy, the config model: ~0.25 s of each worker's start).
    code = ("import pickle, sys; from chronicle.workers import draw;"
            "pickle.loads(pickle.dumps(draw.svg_and_png));"
            "print(' '.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    ours = [m for m in loaded if m == "chronicle" or m.startswith("chronicle.")]
    assert ours == ["chronicle", "chronicle.workers", "chronicle.workers.draw"]
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


def _fonts(root: Path, *names: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / name).write_bytes(b"\0font")


def test_font_config_lists_the_han_fonts_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One known set: vl-convert's own Liberation Sans, then the machine's Noto CJK faces
    # (fonts-noto-cjk), and nothing else the machine has, so a chart is the same bytes on
    # any machine with that package.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    system = tmp_path / "share" / "fonts"
    _fonts(system / "truetype" / "liberation", "LiberationSans-Regular.ttf",
           "LiberationSans-Bold.ttf", "LiberationMono-Regular.ttf")
    _fonts(system / "opentype" / "noto", "NotoSansCJK-Bold.ttc", "NotoSansCJK-Regular.ttc",
           "NotoSerifCJK-Regular.ttc", "README")
    conf = draw.font_config([system, tmp_path / "absent"])
    assert conf is not None and conf.parent.parent == tmp_path / "cache" / "chronicle" / "fonts"
    text = conf.read_text(encoding="utf-8")
    listed = [Path(d) for d in re.findall(r"<dir>([^<]+)</dir>", text)]
    linked = [p.resolve().name for d in listed for p in d.iterdir()]
    # Regular sans faces first: a glyph Liberation Sans lacks comes from the first font
    # that has it (a CJK label is drawn in Noto Sans CJK Regular, not its bold cut).
    assert linked == ["NotoSansCJK-Regular.ttc", "NotoSerifCJK-Regular.ttc",
                      "NotoSansCJK-Bold.ttc"]
    # Kept under the list's sha256: another font of the machine changes nothing, a new
    # Han face makes another list.
    assert draw.font_config([system]) == conf
    _fonts(system / "truetype" / "dejavu", "DejaVuSans.ttf")
    assert draw.font_config([system]) == conf
    _fonts(system / "opentype" / "noto", "NotoSansCJK-Light.ttc")
    assert draw.font_config([system]) not in (None, conf)


def test_a_font_list_planted_in_the_cache_is_made_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The list decides how sealed SVGs measure text: a cached one that points anywhere but
    # at this machine's fonts (an edited fonts.conf, a relinked font) is never used.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    system = tmp_path / "share" / "fonts"
    _fonts(system, "LiberationSans-Regular.ttf", "DejaVuSans.ttf", "NotoSansCJK-Regular.ttc")
    _fonts(tmp_path / "evil", "Evil.ttf")
    conf = draw.font_config([system])
    assert conf is not None
    good = conf.read_text(encoding="utf-8")
    link = next(p for p in conf.parent.rglob("*.ttc"))
    link.unlink()
    link.symlink_to(tmp_path / "evil" / "Evil.ttf")
    assert draw.font_config([system]) == conf
    assert link.resolve() == (system / "NotoSansCJK-Regular.ttc").resolve()
    conf.write_text(good.replace("</fontconfig>", f"  <dir>{tmp_path / 'evil'}</dir>\n"
                                                  "</fontconfig>"), encoding="utf-8")
    assert draw.font_config([system]) == conf
    assert conf.read_text(encoding="utf-8") == good


def test_without_a_han_font_the_list_is_empty_and_none_when_it_cannot_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _fonts(tmp_path / "plain", "DejaVuSans.ttf")
    assert draw.han_fonts([tmp_path / "plain"]) == []
    conf = draw.font_config([tmp_path / "plain"])  # vl-convert's own font alone
    assert conf is not None and "<dir>" not in conf.read_text(encoding="utf-8")
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert draw.font_config([tmp_path / "plain"]) is None  # vl-convert reads the system's


def test_chronicle_font_dirs_stands_in_for_the_machines_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fonts(tmp_path / "mine", "NotoSansCJK-Regular.ttc")
    monkeypatch.setenv(draw.FONT_DIRS, f"{tmp_path / 'mine'}{os.pathsep}{tmp_path / 'none'}")
    assert draw.font_roots() == [tmp_path / "mine", tmp_path / "none"]
    assert [p.name for p in draw.han_fonts()] == ["NotoSansCJK-Regular.ttc"]
    monkeypatch.setenv(draw.FONT_DIRS, "")
    assert draw.font_roots() == [] and draw.han_fonts() == []


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to see file opens")
def test_labels_are_measured_without_reopening_a_font_file_per_glyph(tmp_path: Path) -> None:
    # With the machine's Liberation Sans shown to vl-convert, each glyph of each label
    # opened and mapped it again (~1,500 times a chart); drawing must open it never.
    code = ("from chronicle.workers import draw;"
            f"spec = {SPEC!r};"
            "spec['encoding']['x']['title'] = 'tokens processed, a long axis title';"
            "draw.svg(spec, None)")
    trace = tmp_path / "trace"
    subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", str(trace), sys.executable,
                    "-c", code], check=True, capture_output=True)
    opened = trace.read_text(encoding="utf-8")
    if not any(name in opened for name in draw.SHIPPED) and draw.font_config() is None:
        pytest.skip("this machine has no Liberation Sans of its own")
    assert sum(opened.count(name) for name in draw.SHIPPED) == 0
