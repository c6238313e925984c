"""`chronicle verify` misses nothing it can know (store/verify.py): stray entries and
symlinks in the store, a missing docs/, malformed or missing manifests (findings among the
others, never a traceback), and the newest snapshot checked against a published head."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from chronicle.errors import EXIT_FAILURE
from tests.support.commands import cli, night, take_nights
from tests.support.config import scaffold_simulated


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chronicle with three nights taken and its site built (copied by each test)."""
    root = scaffold_simulated(tmp_path_factory.mktemp("verify") / "c")
    take_nights(root)
    assert cli("build", "--dir", str(root)).exit_code == 0
    return root


@pytest.fixture
def root(sealed: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sealed, tmp_path / "c", symlinks=True))


def _fails(result: Result, *findings: str) -> None:
    assert result.exit_code == EXIT_FAILURE, result.output
    assert "Traceback" not in result.output
    for finding in findings:
        assert f"FAIL {finding}" in result.output, result.output


def test_a_clean_store_names_its_head(root: Path) -> None:
    result = cli("verify", "--dir", str(root))
    head = json.loads((root / "site/api/latest.json").read_text())["head"]
    assert head["snapshot"] == "2026-08-23T031700Z" and len(head["sha256"]) == 64
    assert result.exit_code == 0
    assert f"head 2026-08-23T031700Z (manifest sha256 {head['sha256']})" in result.output
    assert head["sha256"] in (root / "site/index.html").read_text()


def test_verify_swhid_prints_the_swhids_the_site_publishes(root: Path) -> None:
    result = cli("verify", "--dir", str(root), "--swhid")
    assert result.exit_code == 0, result.output
    index = json.loads((root / "site/api/index.json").read_text())["days"]
    said = [line for line in result.output.splitlines() if line.startswith("swhid ")]
    assert said == [f"swhid {d['date']} {d['swhid']} {d['swhid_dir']}" for d in index]
    assert len(said) == 3 and "swhid " not in cli("verify", "--dir", str(root)).output
    # One changed byte: a failure naming the page, and no SWHID of bytes it cannot vouch for.
    page = root / "docs/days/2026-08-20.md"
    page.write_bytes(page.read_bytes().replace(b"#", b"##", 1))
    result = cli("verify", "--dir", str(root), "--swhid")
    _fails(result, "docs/days/2026-08-20.md: altered")
    assert "swhid " not in result.output


def test_stray_entries_and_symlinks_in_the_store_are_findings(root: Path) -> None:
    data = root / "docs" / "data"
    (data / "notes.txt").write_text("published by build as is")
    (data / ".cache").mkdir()
    (data / "latest").symlink_to(data / "2026-08-23T031700Z")
    (root / "docs" / "days" / "2026-08-24.md").symlink_to("/etc/hostname")
    _fails(cli("verify", "--dir", str(root)),
           "docs/data/notes.txt: a file directly in docs/data",
           "docs/data/.cache: a hidden entry in docs/data",
           "docs/data/latest: a symlink",
           "docs/days/2026-08-24.md: a symlink",
           "docs/days/2026-08-24.md: not sealed by any readable snapshot manifest")


def test_a_missing_docs_folder_is_a_finding(root: Path) -> None:
    shutil.rmtree(root / "docs")
    _fails(cli("verify", "--dir", str(root)), f"{root / 'docs'}: missing")


def test_a_malformed_manifest_is_a_finding_among_the_others(root: Path) -> None:
    manifest = root / "docs/data/2026-08-22T031700Z/MANIFEST.json"
    doc = json.loads(manifest.read_text())
    doc["files"], doc["previous"] = 5, "x"
    manifest.write_text(json.dumps(doc))
    page = root / "docs/days/2026-08-20.md"
    page.write_text(page.read_text() + "edited\n")
    _fails(cli("verify", "--dir", str(root)),
           "docs/data/2026-08-22T031700Z/MANIFEST.json: malformed: files: expected a mapping",
           "docs/data/2026-08-22T031700Z/MANIFEST.json: malformed: previous: expected null",
           # the next manifest recorded its sha256, which the edit changed:
           "docs/data/2026-08-22T031700Z/MANIFEST.json: altered: its sha256 no longer",
           "docs/days/2026-08-20.md: altered")
    # build and snapshot refuse the store with one message naming the file and the fix.
    for command in (["build"], ["snapshot", "--as-of", night(4)]):
        result = cli(*command, "--dir", str(root))
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "2026-08-22T031700Z/MANIFEST.json: manifest is damaged (" in result.output
        assert "files: expected a mapping" in result.output
        assert "git checkout --" in result.output


@pytest.mark.parametrize("damage", ["missing", "not valid JSON"])
def test_a_missing_or_unparsable_manifest_lists_the_other_findings(
        root: Path, damage: str) -> None:
    manifest = root / "docs/data/2026-08-21T031700Z/MANIFEST.json"
    if damage == "missing":
        manifest.unlink()
    else:
        manifest.write_text('{"snapshot": ')
    (root / "docs/days/2026-08-21.json").write_text("{}")
    # The day's other files: its JSON, chart specs, SVGs and the feeds' PNG.
    others = len(list((root / "docs/days/2026-08-20").iterdir())) + 1
    result = cli("verify", "--dir", str(root))
    said = "missing" if damage == "missing" else "not a manifest chronicle can read (Expecting"
    _fails(result, f"docs/data/2026-08-21T031700Z/MANIFEST.json: {said}",
           "docs/days/2026-08-21.json: altered",
           f"docs/days/2026-08-20.md (and {others} more file(s) of that day): not sealed by "
           "any readable snapshot manifest")
    if damage == "not valid JSON":
        _fails(result, "docs/data/2026-08-21T031700Z/MANIFEST.json: altered: its sha256")


@pytest.fixture
def served(sealed: Path) -> Iterator[str]:
    """The built site on a local HTTP server (127.0.0.1): its URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(sealed / "site"))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}/"
        server.shutdown()


def test_verify_against_a_published_head_by_url_file_and_sha(
        root: Path, served: str, tmp_path: Path) -> None:
    latest = root / "site/api/latest.json"
    saved = tmp_path / "latest.json"
    shutil.copy(latest, saved)
    sha = json.loads(latest.read_text())["head"]["sha256"]
    for against in (served, served + "api/latest.json", served + "index.html", str(saved),
                    str(root / "site"), sha):
        result = cli("verify", "--dir", str(root), "--against", against)
        assert result.exit_code == 0, (against, result.output)
        assert "is in this chain" in result.output
    # A later snapshot keeps the published head in the chain: still fine.
    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code == 0
    assert cli("verify", "--dir", str(root), "--against", served).exit_code == 0


def test_a_truncated_chain_passes_alone_but_not_against_its_published_head(
        root: Path, served: str) -> None:
    newest = root / "docs/data/2026-08-23T031700Z"
    sealed = json.loads((newest / "MANIFEST.json").read_text())["sealed"]
    shutil.rmtree(newest)
    for files in sealed.values():
        for rel in files:
            (root / "docs" / rel).unlink()
    assert cli("verify", "--dir", str(root)).exit_code == 0  # nothing left to compare with
    _fails(cli("verify", "--dir", str(root), "--against", served),
           "docs/data/2026-08-23T031700Z: missing: http://127.0.0.1:")


def test_a_rewritten_newest_snapshot_fails_against_its_published_head(
        root: Path, served: str) -> None:
    newest = root / "docs/data/2026-08-23T031700Z"
    manifest = json.loads((newest / "MANIFEST.json").read_text())
    manifest["sources"]["wandb"]["rows"] = 0  # consistent with itself: verify alone passes
    (newest / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    assert cli("verify", "--dir", str(root)).exit_code == 0
    _fails(cli("verify", "--dir", str(root), "--against", served),
           "docs/data/2026-08-23T031700Z/MANIFEST.json: rewritten")


@pytest.mark.parametrize(("against", "said"), [
    ("ftp://127.0.0.1/x", "not an http(s) URL"),
    ("http://127.0.0.1:9/", "could not fetch it"),
    ("nope", "is not a URL, a file, a site folder or a sha256"),
])
def test_a_bad_against_is_one_clear_message(root: Path, against: str, said: str) -> None:
    result = cli("verify", "--dir", str(root), "--against", against)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("content", "said"), [
    (b"[" * 200_000, "not JSON a chronicle writes (nested deeper than 64 levels)"),
    (json.dumps({"head": {"snapshot": "/etc", "sha256": "0" * 64}}).encode(),
     'head.snapshot is "/etc", not a snapshot id'),
    (json.dumps({"head": {"snapshot": "../../x", "sha256": "0" * 64}}).encode(),
     'head.snapshot is "../../x", not a snapshot id'),
    (json.dumps({"head": {"snapshot": "2026-08-23T031700Z", "sha256": "zz"}}).encode(),
     'head.sha256 is "zz", not a sha256'),
    (json.dumps({"format": "chronicle-manifest/1", "snapshot": "/etc"}).encode(),
     "a malformed manifest"),
])
def test_what_against_reads_is_checked_before_it_is_used(
        root: Path, tmp_path: Path, content: bytes, said: str) -> None:
    saved = tmp_path / "latest.json"
    saved.write_bytes(content)
    result = cli("verify", "--dir", str(root), "--against", str(saved))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # a message, never a traceback
    assert f"error: {saved}: {said}" in result.output


def test_an_against_file_is_bounded_in_size_and_must_be_a_file(
        root: Path, tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as sink:
        sink.truncate(500 << 20)  # 500 MB (sparse): never read
    result = cli("verify", "--dir", str(root), "--against", str(huge))
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert f"--against {huge}: 524,288,000 bytes or more, over the 10 MB" in result.output
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)  # would never end
    result = cli("verify", "--dir", str(root), "--against", str(pipe))
    assert result.exit_code == 2 and f"--against {pipe}: not a regular file" in result.output


def test_a_newest_manifest_nested_100000_deep_is_a_finding_never_a_traceback(
        root: Path) -> None:
    manifest = root / "docs/data/2026-08-23T031700Z/MANIFEST.json"
    manifest.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    (root / "docs/days/2026-08-21.md").write_text("edited\n")  # another finding, still listed
    result = cli("verify", "--dir", str(root))
    _fails(result, "docs/data/2026-08-23T031700Z/MANIFEST.json: not a manifest chronicle can "
                   "read (nested deeper than 64 levels)",
           "docs/days/2026-08-21.md: altered",
           "docs/days/2026-08-22.md (and")  # the day it sealed: no readable manifest seals it
    for command in (["build"], ["snapshot", "--as-of", night(4)]):
        refused = cli(command[0], "--dir", str(root), *command[1:])
        assert refused.exit_code == 2 and isinstance(refused.exception, SystemExit), command
        assert f"{manifest}: manifest is damaged (nested deeper than 64 levels)" \
            in refused.output, refused.output
