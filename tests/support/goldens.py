"""The v1 chronicle and the golden list of sealed bytes that tests/test_sealed_compat.py
holds the current code to.

`tests/fixtures/chronicle_v1.tar.gz` is a 3-day demo chronicle made at commit 4eb424f; it
never changes. `tests/fixtures/golden/demo3_sealed.json` is {path under docs/: sha256} of
every file under docs/data and docs/days that the current code seals when it replays the
v1 chronicle's 3 nights from its chronicle.yml and failures.yml. Regenerate it only when
the rendering of newly sealed days changes on purpose:

    python -m tests.support.goldens
"""

from __future__ import annotations

import json
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from chronicle.cli import main as cli
from chronicle.store import sha256_file
from tests.support.paths import FIXTURES, REPO

V1 = FIXTURES / "chronicle_v1.tar.gz"
GOLDEN = FIXTURES / "golden" / "demo3_sealed.json"
# The page version (chronicle/snapshot/provenance.py DAY_PAGE) GOLDEN's day files were
# sealed with: `verify --recompute` compares a day's bytes only under the same version, so
# new days must not render differently under an old one.
GOLDEN_PAGE = FIXTURES / "golden" / "demo3_day_page.txt"
NIGHTS = ("2026-08-21T03:17:00Z", "2026-08-22T03:17:00Z", "2026-08-23T03:17:00Z")


def unpack_v1(target: Path) -> Path:
    """Extract the v1 chronicle into `target` and return it."""
    with tarfile.open(V1) as tar:
        # tarfile's extraction filters arrived in 3.11.4; Debian 12's python3 is 3.11.2.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(target, filter="data")
        else:
            tar.extractall(target)  # our own fixture: its members are checked in
    return target


def stored_digests(root: Path) -> dict[str, str]:
    """Return {path under docs/: sha256} of every snapshot and sealed-day file."""
    docs = root / "docs"
    return {
        str(p.relative_to(docs)): sha256_file(p)
        for sub in ("data", "days")
        for p in sorted((docs / sub).rglob("*"))
        if p.is_file()
    }


def take_snapshot(root: Path, as_of: str) -> None:
    """Run `chronicle snapshot --dir root --as-of as_of`; fail naming its output if it fails."""
    result = CliRunner().invoke(cli, ["snapshot", "--dir", str(root), "--as-of", as_of])
    assert result.exit_code == 0, result.output


def seal_v1_nights(v1: Path, fresh: Path) -> dict[str, str]:
    """Replay the unpacked v1 chronicle's NIGHTS in a new chronicle in `fresh` (its
    chronicle.yml and failures.yml, no scaffold); return its stored_digests."""
    (fresh / "docs").mkdir(parents=True)
    for name in ("chronicle.yml", "failures.yml"):
        (fresh / name).write_bytes((v1 / name).read_bytes())
    for night in NIGHTS:
        take_snapshot(fresh, night)
    return stored_digests(fresh)


def keeps_v1_columns(old: Path, new: Path) -> bool:
    """Whether the Parquet file `new` has every row and column of `old` with the same
    values (floats to 1e-12, NaN equal to NaN, null to null); it may have more columns."""
    a, b = pq.read_table(old), pq.read_table(new)
    if a.num_rows != b.num_rows or not set(a.column_names) <= set(b.column_names):
        return False
    for name in a.column_names:
        x, y = a.column(name), b.column(name)
        if x.type != y.type or x.null_count != y.null_count:
            return False
        if pa.types.is_floating(x.type):
            # v1 was simulated where NumPy's exp/log/power took AVX-512 paths (SVML), which
            # differ from the C library's, now used everywhere, in the last bit: the same
            # values to 1e-12, never a changed one.
            if not np.allclose(x.to_numpy(zero_copy_only=False),
                               y.to_numpy(zero_copy_only=False), rtol=1e-12, atol=0.0,
                               equal_nan=True):
                return False
        elif x.to_pylist() != y.to_pylist():
            return False
    return True


def read_golden() -> dict[str, str]:
    """Return the golden {path under docs/: sha256}."""
    golden: dict[str, str] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return golden


def golden_page() -> str | None:
    """Return the page version GOLDEN was made with (None: made before it was recorded)."""
    return GOLDEN_PAGE.read_text(encoding="utf-8").strip() if GOLDEN_PAGE.is_file() else None


def main() -> int:
    """Regenerate GOLDEN from the current code; print what changed."""
    from chronicle.snapshot.provenance import DAY_PAGE

    old = read_golden() if GOLDEN.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="chronicle-golden-") as tmp:
        new = seal_v1_nights(unpack_v1(Path(tmp) / "v1"), Path(tmp) / "fresh")
    changed = sorted(p for p in new.keys() & old.keys() if new[p] != old[p])
    days = [p for p in changed if p.startswith("days/") and not p.endswith((".svg", ".png"))]
    if days and golden_page() == DAY_PAGE:
        print(f"refused: newly sealed days render differently ({', '.join(days[:3])}) under "
              f"the same page version {DAY_PAGE}; bump DAY_PAGE in "
              "chronicle/snapshot/provenance.py (verify --recompute compares a day's bytes "
              "only under its own version), then run this again")
        return 1
    GOLDEN.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    GOLDEN_PAGE.write_text(DAY_PAGE + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(REPO)}: {len(new)} files; {len(changed)} changed, "
          f"{len(new.keys() - old.keys())} added, {len(old.keys() - new.keys())} removed")
    for path in changed:
        print(f"  changed {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
