"""`make screenshots`: the pictures of what a reader sees, in the README and the docs (the
demo's home page and its newest day page with metrics, 1280 px wide, light scheme), taken
in Debian's chromium.

    python -m tests.support.screenshots [SITE_DIR] [OUT_DIR]
    # default: demo/site -> documentation/pages/img
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.browser import LAPTOP, chromium, open_page, serve
from tests.support.paths import REPO

SHOTS = {"home.png": ("index.html", LAPTOP["height"]), "day.png": (None, 1500)}


def take(base_url: str, out: Path, browser: Any) -> list[Path]:
    """Write home.png and day.png of the site at `base_url` into `out`; return them."""
    newest = "index.html"
    with urllib.request.urlopen(base_url + "api/index.json") as answer:  # 127.0.0.1 only
        days = json.load(answer)["days"]
    for day in reversed(days):  # the newest day with metrics (a run's last day may have none)
        with urllib.request.urlopen(f"{base_url}api/days/{day['date']}.json") as answer:
            if json.load(answer)["data"]["rows"]:
                newest = f"days/{day['date']}.html"
                break
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (path, height) in SHOTS.items():
        page = open_page(browser, base_url + (path or newest),
                         {"width": LAPTOP["width"], "height": height}, "light")
        page.screenshot(path=str(out / name))
        page.context.close()
        written.append(out / name)
    return written


def main(argv: list[str]) -> None:
    site = Path(argv[0]) if argv else REPO / "demo" / "site"
    out = Path(argv[1]) if len(argv) > 1 else REPO / "documentation" / "pages" / "img"
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site}: no built site; run `make demo` first")
    with serve(site) as url, chromium() as browser:
        for path in take(url, out, browser):
            print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main(sys.argv[1:])
