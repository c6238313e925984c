"""`.zenodo.json`: written from chronicle.yml with only the fields Zenodo documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.cli import main as cli
from chronicle.config import ConfigError, load_config, parse_config
from chronicle.init import InitOptions, init_chronicle
from chronicle.site.publish.zenodo import zenodo_json, zenodo_metadata

# Zenodo's deposit metadata (developers.zenodo.org, "Deposit metadata"), the fields a
# .zenodo.json may hold, and the relations its related_identifiers accept.
ZENODO_FIELDS = {
    "upload_type", "publication_type", "image_type", "publication_date", "title", "creators",
    "description", "access_right", "license", "embargo_date", "access_conditions", "doi",
    "prereserve_doi", "keywords", "notes", "related_identifiers", "contributors",
    "references", "communities", "grants", "journal_title", "journal_volume",
    "journal_issue", "journal_pages", "conference_title", "conference_acronym",
    "conference_dates", "conference_place", "conference_url", "conference_session",
    "conference_session_part", "imprint_publisher", "imprint_isbn", "imprint_place",
    "partof_title", "partof_pages", "thesis_supervisors", "thesis_university", "subjects",
    "version", "language", "locations", "dates", "method",
}
UPLOAD_TYPES = {"publication", "poster", "presentation", "dataset", "image", "video",
                "software", "lesson", "physicalobject", "other"}
CREATOR_FIELDS = {"name", "affiliation", "orcid", "gnd"}
RELATIONS = {
    "isCitedBy", "cites", "isSupplementTo", "isSupplementedBy", "isContinuedBy", "continues",
    "isDescribedBy", "describes", "hasMetadata", "isMetadataFor", "isNewVersionOf",
    "isPreviousVersionOf", "isPartOf", "hasPart", "isReferencedBy", "references",
    "isDocumentedBy", "documents", "isCompiledBy", "compiles", "isVariantFormOf",
    "isOriginalFormOf", "isIdenticalTo", "isAlternateIdentifier", "isReviewedBy", "reviews",
    "isDerivedFrom", "isSourceOf", "requires", "isRequiredBy", "isObsoletedBy", "obsoletes",
}
BASE = {
    "source": "simulated",
    "run": {"name": "Test <Run>", "start": "2026-08-20", "planned_days": 100,
            "token_budget": 1.8e13, "accelerators": {"kind": "GB200", "count": 704}},
    "wandb": {"entity": "e", "project": "p"},
    "github": {"repo": "o/r"},
    "site": {"url": "https://example.org/c/", "author": "Test Team", "license": "CC0-1.0"},
}


def assert_zenodo_shaped(meta: dict[str, object]) -> None:
    assert set(meta) <= ZENODO_FIELDS, set(meta) - ZENODO_FIELDS
    for required in ("upload_type", "title", "creators", "description"):
        assert meta[required], required
    assert meta["upload_type"] in UPLOAD_TYPES
    assert isinstance(meta["creators"], list)
    for creator in meta["creators"]:
        assert set(creator) <= CREATOR_FIELDS and creator["name"]
    assert isinstance(meta["keywords"], list)
    assert all(isinstance(k, str) and k for k in meta["keywords"])
    assert isinstance(meta["related_identifiers"], list)
    for rel in meta["related_identifiers"]:
        assert set(rel) <= {"identifier", "relation", "resource_type"}
        assert rel["relation"] in RELATIONS


def test_defaults_come_from_the_site_and_run() -> None:
    meta = zenodo_metadata(parse_config(BASE, Path(".")))
    assert_zenodo_shaped(meta)
    assert meta["title"] == "Test <Run>: a chronicle"
    assert meta["upload_type"] == "dataset"
    assert meta["creators"] == [{"name": "Test Team"}]
    assert meta["license"] == "CC0-1.0"
    assert meta["related_identifiers"] == [
        {"identifier": "https://example.org/c/", "relation": "isSupplementTo"}]
    assert "Test &lt;Run&gt;" in str(meta["description"])  # HTML: the name is text
    assert "Test <Run>" in meta["keywords"]  # type: ignore[operator]


def test_the_zenodo_section_names_creators_keywords_and_description() -> None:
    config = parse_config({**BASE, "zenodo": {
        "creators": [{"name": "Doe, Jane", "affiliation": "Lab", "orcid": "0000-0002-1825-0097"},
                     {"name": "Roe, Rick"}],
        "keywords": ["MoE"], "description": "Mine."}}, Path("."))
    meta = zenodo_metadata(config)
    assert_zenodo_shaped(meta)
    assert meta["creators"] == [
        {"name": "Doe, Jane", "affiliation": "Lab", "orcid": "0000-0002-1825-0097"},
        {"name": "Roe, Rick"}]
    assert (meta["keywords"], meta["description"]) == (["MoE"], "Mine.")
    assert json.loads(zenodo_json(config)) == meta


def test_bad_creators_are_named_at_once() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({**BASE, "zenodo": {
            "creators": [{"name": ""}, {"name": "Doe, J", "orcid": "https://orcid.org/x"}],
            "keywords": "one"}}, Path("."))
    text = str(err.value)
    for where in ("zenodo.creators[0].name", "zenodo.creators[1].orcid", "zenodo.keywords"):
        assert where in text, where


def test_init_writes_it_and_the_command_rewrites_it_after_an_edit(tmp_path: Path) -> None:
    root = tmp_path / "c"
    written = init_chronicle(root, InitOptions(source="simulated", name="Init Run"))
    assert root / ".zenodo.json" in written
    meta = json.loads((root / ".zenodo.json").read_text(encoding="utf-8"))
    assert_zenodo_shaped(meta)
    assert meta["title"] == "Init Run: a chronicle"
    runner = CliRunner()
    result = runner.invoke(cli, ["zenodo", "--dir", str(root)])
    assert result.exit_code == 0 and "unchanged" in result.output
    config = root / "chronicle.yml"
    config.write_text(config.read_text().replace("name: Init Run", "name: Renamed"))
    result = runner.invoke(cli, ["zenodo", "--dir", str(root)])
    assert result.exit_code == 0 and "wrote" in result.output
    assert json.loads((root / ".zenodo.json").read_text())["title"] == "Renamed: a chronicle"
    assert zenodo_json(load_config(root)) == (root / ".zenodo.json").read_bytes()


def test_control_characters_in_the_config_are_refused_where_they_are_read() -> None:
    # An escape in a creator's name would reach .zenodo.json, every feed and a terminal.
    with pytest.raises(ConfigError) as err:
        parse_config({**BASE, "site": {**BASE["site"], "author": "Team\x1b]0;x\x07"},
                      "zenodo": {"creators": [{"name": "Doe,\x1b[2J Jane"},
                                              {"name": "Roe, R", "affiliation": "Lab\x00"}],
                                 "keywords": ["ml", "bell\x07"]}}, Path("."))
    text = str(err.value)
    for where, code, at in (("zenodo.creators[0].name", "001B", 5),
                            ("zenodo.creators[1].affiliation", "0000", 4),
                            ("zenodo.keywords", "0007", 5), ("site.author", "001B", 5)):
        assert f"{where}: holds a control character (U+{code}) at character {at}" in text, text
