"""config/yaml.py: hand-written YAML is read strictly, and every refusal names the line."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from chronicle.config import read_yaml
from chronicle.config.yaml import MAX_BYTES, parse_yaml
from chronicle.errors import ConfigError


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, "chronicle.yml")
    assert info.value.path == "chronicle.yml"
    return info.value.problems


def test_a_key_written_twice_is_refused_naming_both_lines_and_the_path() -> None:
    found = problems("run:\n  name: a\n  start: 2026-08-20\n  name: b\nsite: {url: x, url: y}\n"
                     "health:\n  - {id: a}\n  - {id: b, rule: x, rule: y}\n")
    assert found == [
        "run.name: key written twice (lines 2 and 4); YAML would keep only the last: delete one",
        "site.url: key written twice (lines 5 and 5); YAML would keep only the last: "
        "delete one",
        "health[1].rule: key written twice (lines 8 and 8); YAML would keep only the last: "
        "delete one",
    ]


def test_the_same_key_in_two_mappings_is_fine() -> None:
    data = parse_yaml("run: {name: a}\nsite: {name: b}\nrows:\n  - {id: 1}\n  - {id: 2}\n", "x")
    assert data == {"run": {"name": "a"}, "site": {"name": "b"}, "rows": [{"id": 1}, {"id": 2}]}


def test_aliases_are_refused_so_a_few_lines_cannot_expand_into_gigabytes() -> None:
    laughs = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        laughs += f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    found = problems(laughs)
    assert len(found) == 1 and found[0].startswith("not valid YAML at line 2, column 8: alias *a")
    assert "write the value out" in found[0]
    assert len(str(ConfigError("chronicle.yml", found))) < 300
    assert parse_yaml("a: &x 1\nb: 2\n", "x") == {"a": 1, "b": 2}  # an anchor alone is harmless


def test_a_date_that_does_not_exist_stays_a_string_for_its_key_to_report() -> None:
    data = parse_yaml("start: 2026-02-30\nat: 2026-02-30T04:10:00Z\nok: 2026-02-28\n", "x")
    assert data == {"start": "2026-02-30", "at": "2026-02-30T04:10:00Z", "ok": date(2026, 2, 28)}


def test_an_integer_beyond_pythons_parsing_limit_stays_a_string() -> None:
    digits = "1" * 5000
    assert parse_yaml(f"planned_days: {digits}\n", "x") == {"planned_days": digits}


def test_deep_nesting_is_one_message_not_a_recursion_error() -> None:
    found = problems("health: " + "[" * 20000 + "]" * 20000 + "\n")
    assert found == ["nested too deeply to read (thousands of levels of [ or {); "
                     "is it the right file?"]


def test_syntax_errors_name_both_lines_and_stay_short() -> None:
    found = problems("run: [unclosed\n")
    assert found == ["not valid YAML at line 2, column 1: expected ',' or ']', but got "
                     "'<stream end>' (while parsing a flow sequence at line 1, column 6)"]
    long_tag = problems("run: !" + "x" * 10000 + " 1\n")
    assert len(long_tag[0]) < 300


def test_non_utf8_bytes_are_named_by_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "chronicle.yml"
    path.write_bytes(b"run:\n  name: caf\xe9\n")
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert info.value.path == str(path)
    assert info.value.problems == [
        "not UTF-8 text: byte 0xe9 at line 2, column 12; save the file as UTF-8"]


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "chronicle.yml"
    path.write_bytes("\ufeffrun: {name: café}\n".encode())
    assert read_yaml(path) == {"run": {"name": "café"}}


def test_unreadable_or_huge_files_are_one_message(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        read_yaml(tmp_path)  # a folder
    big = tmp_path / "big.yml"
    big.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(ConfigError, match="the limit is"):
        read_yaml(big)


def test_an_empty_document_is_none() -> None:
    assert parse_yaml("# only a comment\n", "x") is None
