"""Bad chronicle.yml / failures.yml through the CLI: exit 2, one short message naming the
file, the key and the fix, never a traceback, and nothing written (store and site)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.errors import EXIT_USAGE

FIRST_NIGHT = "2026-08-22T03:17:00Z"
NEXT_NIGHT = "2026-08-23T03:17:00Z"
Edit = Callable[[bytes], bytes]


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*")
                  if p.is_file())


@pytest.fixture(scope="module")
def snapshotted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-day simulated chronicle with one snapshot (two sealed days) in its store."""
    root = tmp_path_factory.mktemp("config_cli") / "c"
    runner = CliRunner()
    assert runner.invoke(main, ["init", str(root), "--source", "simulated"]).exit_code == 0
    text = (root / "chronicle.yml").read_text(encoding="utf-8")
    text = text.replace("days: 100", "days: 4").replace("planned_days: 100", "planned_days: 4")
    (root / "chronicle.yml").write_text(text, encoding="utf-8")
    ok = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of", FIRST_NIGHT])
    assert ok.exit_code == 0, ok.output
    return root


@pytest.fixture
def chronicle(snapshotted: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(snapshotted, tmp_path / "c"))


def replace(old: str, new: str) -> Edit:
    def edit(raw: bytes) -> bytes:
        assert old.encode() in raw, old
        return raw.replace(old.encode(), new.encode(), 1)

    return edit


def append(text: bytes) -> Edit:
    return lambda raw: raw + text


LAUGHS = b'x: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + b"".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n".encode()
    for p, n in zip("abcdefgh", "bcdefghi", strict=True))
RECORD = b"- id: rack-7\n  start: 2026-08-21T02:00:00Z\n  what: x\n  evidence: [https://x.org/1]\n"

CASES: list[tuple[str, str, Edit, tuple[str, ...]]] = [
    ("date-unquoted", "chronicle.yml", replace("start: 2026-08-20", "start: 2026-02-30"),
     ("run.start:", "'2026-02-30'", "day is out of range for month")),
    ("date-quoted", "chronicle.yml", replace("start: 2026-08-20", "start: '2026-02-30'"),
     ("run.start:", "day is out of range for month")),
    ("year-1", "chronicle.yml", replace("start: 2026-08-20", "start: 0001-01-01"),
     ("run.start:", "0001-01-01 (outside 1970 to 2100)")),
    ("year-9999", "chronicle.yml", replace("start: 2026-08-20", "start: 9999-01-01"),
     ("run.start:", "(outside 1970 to 2100)")),
    ("planned-days", "chronicle.yml", replace("planned_days: 4", "planned_days: 10000000000"),
     ("run.planned_days: expected a whole number from 1 to 3,650",)),
    ("simulated-days", "chronicle.yml", replace("  days: 4", "  days: 99999999"),
     ("simulated.days: expected a whole number from 1 to 3,650",)),
    ("negative-seed", "chronicle.yml", replace("seed: 535", "seed: -5"),
     ("simulated.seed: expected a whole number from 0 to",)),
    ("huge-int", "chronicle.yml", replace("planned_days: 4", "planned_days: " + "9" * 5000),
     ("run.planned_days: expected a whole number",)),
    ("non-utf8", "chronicle.yml", append(b"# caf\xe9\n"),
     ("not UTF-8 text: byte 0xe9 at line", "save the file as UTF-8")),
    ("nan-gap", "chronicle.yml", replace("gap_minutes: 10", "gap_minutes: .nan"),
     ("failures.gap_minutes:", "got .nan", "NaN and infinity")),
    ("inf-budget", "chronicle.yml", replace("token_budget: 18.0e+12", "token_budget: .inf"),
     ("run.token_budget:", "got .inf")),
    ("nan-price", "chronicle.yml", replace("spot 2026-11: 4.22", "spot 2026-11: .NaN"),
     ("run.prices_usd_per_accelerator_hour.spot 2026-11:", "got .nan")),
    # The scaffold's example prediction (init --source simulated), one value made NaN.
    ("nan-prediction", "chronicle.yml", replace("- [0.02, 2.9226, 2.9106, 2.9346]",
                                                "- [0.02, .nan, 2.9106, 2.9346]"),
     ("prediction.table[0]:", "finite numbers")),
    ("inf-health", "chronicle.yml", append(b'health: [{id: grad_norm, rule: "max > 1e999"}]\n'),
     ("health[0].rule:",)),
    ("duplicate-key", "chronicle.yml", replace("  planned_days: 4\n",
                                               "  planned_days: 4\n  planned_days: 5\n"),
     ("run.planned_days: key written twice (lines 11 and 12)", "delete one")),
    ("alias-bomb", "chronicle.yml", append(LAUGHS),
     ("alias *a is not allowed", "write the value out in full")),
    ("deep-nesting", "chronicle.yml", append(b"claims: " + b"[" * 30000 + b"]" * 30000 + b"\n"),
     ("nested too deeply",)),
    ("url-quote", "chronicle.yml", replace("url: https://example.org/chronicle/",
                                           'url: https://example.org/"><script>x</script>'),
     ("site.url: expected a plain http(s) URL", "no quotes")),
    ("url-userinfo", "chronicle.yml", replace("url: https://example.org/chronicle/",
                                              "url: https://me@example.org/c/?a=1#b"),
     ("site.url: expected a plain http(s) URL",)),
    ("failures-file-missing", "chronicle.yml", replace("file: failures.yml", "file: gone.yml"),
     ("failures.file: gone.yml does not exist", "create it")),
    ("failures-non-utf8", "failures.yml", append(b"# caf\xe9\n"),
     ("failures.yml", "not UTF-8 text: byte 0xe9")),
    ("failures-bad-date", "failures.yml",
     lambda raw: RECORD.replace(b"2026-08-21T02:00:00Z", b"2026-02-30T02:00:00Z"),
     ("failures.yml", "[0].start:", "day is out of range for month")),
    ("failures-duplicate", "failures.yml", lambda raw: RECORD + b"  what: y\n",
     ("failures.yml", "[0].what: key written twice (lines 3 and 5)")),
    ("failures-alias", "failures.yml", lambda raw: RECORD + b"- &r {id: a}\n- *r\n",
     ("failures.yml", "alias *r is not allowed")),
]
FAILURES_ONLY_AT_SNAPSHOT = {"failures-file-missing", "failures-non-utf8", "failures-bad-date",
                             "failures-duplicate", "failures-alias"}


@pytest.mark.parametrize(("case", "name", "edit", "needles"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_message_exit_2_and_nothing_written(
    chronicle: Path, case: str, name: str, edit: Edit, needles: tuple[str, ...]
) -> None:
    path = chronicle / name
    path.write_bytes(edit(path.read_bytes()))
    before = _tree(chronicle)
    commands = [["snapshot", "--dir", str(chronicle), "--as-of", NEXT_NIGHT]]
    if case not in FAILURES_ONLY_AT_SNAPSHOT:  # `build` never reads failures.yml
        commands.append(["build", "--dir", str(chronicle)])
    for command in commands:
        result = CliRunner().invoke(main, command)
        assert result.exit_code == EXIT_USAGE, (command, result.output)
        assert "Traceback" not in result.output and result.exception is not None
        assert isinstance(result.exception, SystemExit)
        out = result.output
        assert out.startswith("error: ") and f"{name}:" in out, out
        for needle in needles:
            assert needle in out, (needle, out)
        assert len(out) < 1000, f"{len(out)} characters"
        assert _tree(chronicle) == before, "a refused command wrote something"
    assert not (chronicle / "site").exists()


def test_the_default_failures_file_is_optional_when_the_key_is_absent(chronicle: Path) -> None:
    config = chronicle / "chronicle.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "  file: failures.yml ", "  # file: failures.yml "), encoding="utf-8")
    (chronicle / "failures.yml").unlink()
    result = CliRunner().invoke(main, ["snapshot", "--dir", str(chronicle), "--as-of",
                                       NEXT_NIGHT])
    assert result.exit_code == 0, result.output
    assert "sealed: 2026-08-22" in result.output
