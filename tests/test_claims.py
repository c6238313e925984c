"""Claims set against the run's own config and data."""

from __future__ import annotations

import pytest

from chronicle.analysis.claims import check_claims, figures
from chronicle.errors import ConfigError
from chronicle.render import render
from chronicle.render.i18n import ENGLISH, language
from chronicle.render.run_pages import _claimed
from tests.support.config import make_config

CLAIMS = [
    {"statement": "792 GPUs", "value": 792, "unit": "GPUs", "who": "w", "where": "x",
     "when": "2026-08-01", "against": "config.accelerators", "how": "equals"},
    {"statement": "704 GPUs", "value": 704, "unit": "GPUs", "who": "w", "where": "x",
     "against": "config.accelerators"},
    {"statement": "MFU 13.6%", "value": 13.6, "unit": "%", "who": "w", "where": "x",
     "against": "data.mfu_p50", "how": "within", "tolerance": 0.1},
    {"statement": "billions", "value": 1e9, "unit": "USD", "who": "w", "where": "x",
     "against": "data.projected_cost_usd", "how": "at_least"},
]


def _day(mfu: float) -> dict:
    return {"throughput": {"mfu_p50": mfu}, "restarts": 0}


def test_792_is_contradicted_by_704_and_data_claims_wait_for_data() -> None:
    config = make_config(claims=CLAIMS)
    artifacts = (("chronicle.yml", "c" * 64), ("data/x/MANIFEST.json", "d" * 64))
    empty = check_claims(config, figures(config, {}, [], *artifacts))
    assert [c["status"] for c in empty] == ["contradicted", "consistent", "unverifiable",
                                            "unverifiable"]
    assert empty[0]["figure"] == 704 and empty[0]["evidence"] == {"artifact": "chronicle.yml",
                                                                  "sha256": "c" * 64}
    cost = {"projected_usd": {"spot": 7.9e6}, "usd": {"spot": 1e5}}
    later = check_claims(config, figures(config, cost, [_day(21.0), _day(14.0), _day(14.2)],
                                         *artifacts))
    assert later[2]["figure"] == 14.2 and later[2]["status"] == "consistent"
    assert later[3]["status"] == "contradicted"
    assert later[3]["evidence"]["artifact"] == "data/x/MANIFEST.json"


def test_unknown_figure_gets_a_suggestion() -> None:
    bad = dict(CLAIMS[0], against="config.accelerator")
    with pytest.raises(ConfigError, match=r"did you mean 'config\.accelerators'"):
        make_config(claims=[bad])


def test_a_claim_is_said_once_at_the_precision_it_was_made() -> None:
    zh = language("zh")
    # The statement writes its value: it is the claim, shown as written in every language.
    for statement, value in (("The run uses 792 GPUs", 792), ("18.75T tokens", 18.75e12),
                             ("MFU p50 13.6%", 13.6), ("1,024 nodes", 1024)):
        assert _claimed(statement, value, ENGLISH) == _claimed(statement, value, zh) == ""
    # A statement without it gains the claimed value, in the page's language, with the
    # digits it was claimed with (not the site's three).
    assert (_claimed("Billions of dollars of compute", 1e9, ENGLISH),
            _claimed("Billions of dollars of compute", 1e9, zh)) == ("1B", "10亿")
    assert (_claimed("about 19T tokens", 18.75e12, ENGLISH),
            _claimed("about 19T tokens", 18.75e12, zh)) == ("18.75T", "18.75万亿")
    assert _claimed("the MFU is 13.65 or so", 13.6, ENGLISH) == "13.6"
    config = make_config(claims=CLAIMS)
    rows = [{**c, "claimed": _claimed(c["statement"], c["value"], ENGLISH), "figure_text": "x"}
            for c in check_claims(config, figures(config, {}, [], ("c", None), ("d", None)))]
    page = render("claims.md.j2", ENGLISH, claims=rows, snapshot=None)
    lines = page.splitlines()
    # Each claim, its verdict next to it (a phone shows the two first), then who made it.
    assert any(line.startswith("| 792 GPUs | **contradicted** | w, x, 2026-08-01 |")
               for line in lines), page
    assert any("| billions (1B USD) | **" in line and "** | w, x |" in line for line in lines)
    header = next(line for line in lines if line.startswith("| Claim"))
    assert header.startswith("| Claim | Verdict | Who, where, when |")
