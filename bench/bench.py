"""`make bench`: wall time and peak memory per stage of the 100-day demo, page weights.

Each stage runs in its own process so its peak RSS is its own. Targets (issue #2):
whole demo < 60 s on a 2-core machine, < 1 GB peak memory; a day page < 80 KB of HTML,
the search index < 5 MB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAYS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
TARGET_SECONDS, TARGET_MB = 60.0, 1024.0

STAGES = {
    "simulate": (
        "from pathlib import Path; from chronicle.config import load_config;"
        "from chronicle.sources.simulated import SimulatedRun;"
        "SimulatedRun(load_config(Path('{out}')))"
    ),
    "snapshots": (
        "from pathlib import Path; from chronicle.demo import run_demo;"
        "run_demo(Path('{out}'), {days}, echo=lambda s: None, build=False)"
    ),
    "build": (
        "from pathlib import Path; from chronicle.config import load_config;"
        "from chronicle.site.build import build_site; build_site(load_config(Path('{out}')))"
    ),
}


def _stage(code: str) -> tuple[float, float]:
    """Run one stage in a child process; return (wall seconds, that child's peak RSS MB)."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code])
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench stage failed: {code}")
    return seconds, usage.ru_maxrss / 1024.0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "chronicle.cli",
                "init",
                str(out),
                "--source",
                "simulated",
                "--name",
                "bench",
            ],
            check=True,
            capture_output=True,
        )
        cfg = (out / "chronicle.yml").read_text().replace("days: 100", f"days: {DAYS}")
        (out / "chronicle.yml").write_text(cfg)
        rows = []
        for name, code in STAGES.items():
            seconds, mb = _stage(code.format(out=out, days=DAYS))
            rows.append((name, seconds, mb))
        site = out / "site"
        day_pages = sorted((site / "days").glob("*.html"))
        sizes = [p.stat().st_size for p in day_pages]
        index = site / "search" / "search_index.json"
        total_s = sum(r[1] for r in rows[1:])  # snapshots include the simulation
        peak = max(r[2] for r in rows)
        print(f"chronicle bench: {DAYS}-day simulated demo on {os.cpu_count()} cores")
        print(f"{'stage':<12}{'wall s':>10}{'peak MB':>10}")
        for name, seconds, mb in rows:
            print(f"{name:<12}{seconds:>10.2f}{mb:>10.0f}")
        print(
            f"{'demo total':<12}{total_s:>10.2f}{peak:>10.0f}   target < {TARGET_SECONDS:.0f} s "
            f"(ratio {total_s / TARGET_SECONDS:.2f}), < {TARGET_MB:.0f} MB "
            f"(ratio {peak / TARGET_MB:.2f})"
        )
        if sizes:
            print(
                f"day page HTML: median {sorted(sizes)[len(sizes) // 2] / 1024:.1f} KB, max "
                f"{max(sizes) / 1024:.1f} KB (target < 80 KB, ratio {max(sizes) / 1024 / 80:.2f})"
            )
        if index.exists():
            mb = index.stat().st_size / 1e6
            print(f"search index: {mb:.2f} MB (target < 5 MB, ratio {mb / 5:.2f})")
        home = site / "index.html"
        if home.exists():
            print(f"home page HTML: {home.stat().st_size / 1024:.1f} KB")
        site_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
        store_mb = sum(p.stat().st_size for p in (out / "docs").rglob("*") if p.is_file()) / 1e6
        print(f"site: {site_mb:.1f} MB in all; store + sealed pages (docs/): {store_mb:.1f} MB")
        if "--json" in sys.argv:
            figures = {"stages": rows, "day_page_kb_max": max(sizes) / 1024 if sizes else None}
            json.dump(figures, sys.stdout)


if __name__ == "__main__":
    main()
