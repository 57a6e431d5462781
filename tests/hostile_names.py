"""Names that carry markup, terminal escapes, formulas and invisible characters, and saved runs that use them.

:data:`PAYLOADS` are the hostile names of the hardening tests: Plotly label
markup (a ``<span>`` whose style fetches a URL, a link, ``<b>``, ``<br>``,
``<sup>``, ``<i>``, entities), bidirectional and zero-width characters.
:func:`hostile_registry` saves a model, a Fragility, a binary and a
multi-class Transport run and a Receipts cube of a table whose column names,
categories, class names, evidence groups, keys, target names, file name,
verdicts are those payloads, with the URLs pointing at ``host``
(a canary server in the network tests).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]

#: Host the URLs of the payloads name when no canary server is given.
NOWHERE = "127.0.0.1:9"


def payloads(host: str = NOWHERE) -> dict[str, str]:
    """Hostile names by role: each one unique, the URLs pointing at ``host``."""
    return {
        "span": f'<span style="fill:url(http://{host}/span#a)">span</span>',
        "link": f'<a href="http://{host}/phish">Session expired: sign in</a>',
        "bold": "<b>bold</b>",
        "br": "line<br>break",
        "sup": "x<sup>2</sup>",
        "italic": "<i>italic</i>",
        "entity": "&lt;b&gt;entity&amp;",
        "numeric_entity": "&#60;a&#62;num",
        "rtl": "abc\u202edcba",
        "zero_width": "zero\u200bwidth",
        "isolates": "\u2066iso\u2069late\u2067d\u2068x",
    }


#: Substrings none of which may reach a figure as markup (checked in the figure JSON).
MARKUP = ("<span", "<a ", "<a>", "</a>", "<b>", "<br>", "<sup>", "<i>", "href", "url(", "&lt;b", "&#60;")
#: Invisible characters the payloads carry (shown as ``<U+XXXX>`` once escaped).
INVISIBLE = ("\u202e", "\u200b", "\u2066", "\u2067", "\u2068", "\u2069")


def hostile_frame(host: str = NOWHERE, *, rows: int = 700) -> tuple[pd.DataFrame, dict[str, str]]:
    """The loan sample's first ``rows`` rows per year with hostile column names, categories, keys and classes.

    Returns the frame and the renaming (old column -> hostile name).
    """
    p = payloads(host)
    loan = pd.read_csv(ROOT / "sample_data" / "loan_synthetic.csv")
    loan = pd.concat([loan[loan["year"] == 2019].head(rows), loan[loan["year"] == 2023].head(rows)])
    cols = ["application_id", "year", "region", "credit_score", "annual_income", "utilisation", "purpose",
            "n_delinquencies_2y", "loan_amount", "interest_rate", "income_real", "defaulted"]
    frame = loan[cols].reset_index(drop=True)
    rename = {"credit_score": p["span"], "annual_income": p["link"], "utilisation": p["bold"],
              "purpose": p["italic"], "region": p["rtl"], "n_delinquencies_2y": p["zero_width"],
              "interest_rate": p["sup"]}
    purposes = sorted(frame["purpose"].unique())
    kinds = [p["link"], p["span"], p["br"], p["entity"], p["numeric_entity"], p["isolates"], p["bold"]]
    frame["purpose"] = frame["purpose"].map({v: f"{kinds[i % len(kinds)]}·{i}" for i, v in enumerate(purposes)})
    regions = sorted(frame["region"].unique())
    frame["region"] = frame["region"].map({v: f"{p['span'] if i % 2 else p['link']}·{i}" for i, v in enumerate(regions)})
    frame["application_id"] = [f"{p['link'] if i % 3 == 0 else p['rtl']}#{i}" for i in range(len(frame))]
    frame["defaulted"] = frame["defaulted"].map({"yes": p["link"], "no": p["span"]})
    return frame.rename(columns=rename), rename


def _receipts_states(folder: Path, host: str) -> tuple[Path, Path]:
    p = payloads(host)
    state = (
        "grounds: {x: 3}\n"
        f"norms: {{default: '{p['span']}', rules: [{{id: r1, when: \"x > 2\", then: '{p['link']}'}}]}}\n"
        "authority: {r1: \"true\"}\n"
    )
    old, new = folder / "old.yaml", folder / "new.yaml"
    old.write_text(state)
    new.write_text(state.replace("{x: 3}", "{x: 1}"))
    return old, new


def hostile_registry(folder: Path, host: str = NOWHERE) -> tuple[RunRegistry, dict[str, str]]:
    """Save the hostile runs into ``folder/registry.sqlite3``; returns the registry and audit kind -> run id.

    Kinds: ``model``, ``fragility``, ``transport`` (binary), ``transport_mc`` (multi-class) and
    ``receipts`` (a cube whose verdicts are payloads). About a minute on one core.
    """
    p = payloads(host)
    frame, rename = hostile_frame(host)
    data = folder / "<b>loan &amp; <i>data.csv"  # a file name cannot hold "/": no closing tags
    frame.to_csv(data, index=False)
    groups = {rename["credit_score"]: p["link"], rename["annual_income"]: p["link"], rename["utilisation"]: p["span"],
              rename["purpose"]: p["span"], rename["n_delinquencies_2y"]: p["rtl"], "loan_amount": p["sup"],
              rename["interest_rate"]: p["sup"], rename["region"]: p["entity"]}
    dataset = {
        "targets": [{"kind": "class", "name": p["br"], "column": "defaulted", "positive": p["link"]},
                    {"kind": "threshold", "name": p["zero_width"], "column": "income_real", "threshold": 50000.0}],
        "roles": {"income_real": "ignore"},
        "key_column": "application_id", "domain_column": "year", "source_domain": 2019, "target_domain": 2023,
        "strata_columns": [rename["region"]], "evidence_groups": groups,
    }
    audits = [
        {"kind": "model", "bootstrap": 20, "chunk_size": 10},
        {"kind": "fragility", "max_cases": 25, "chunk_size": 25, "n_boot": 5, "shap_max_cases": 0,
         "search_max_cases": 5, "perm_repeats": 1, "stress_draws": 3},
        {"kind": "transport", "n_refits": 1, "n_bootstrap": 20, "n_random_sets": 2, "stress_max_rows": 400,
         "stresses": ["target_definition", "degradation"], "subgroup_columns": [rename["region"]],
         "mappings": ["raw", "platt"]},
    ]
    reg = RunRegistry(folder / "registry.sqlite3")
    cfg = {"name": p["link"], "data": {"path": str(data)}, "dataset": dataset,
           "model": {"kind": "logistic_regression", "seed": 0}, "audits": audits}
    ids = {}
    for outcome in run_config(parse_config(cfg), registry=reg, base_dir=folder):
        assert outcome.status == "done", outcome.error
        ids[outcome.kind] = outcome.run_id
    mc = {**dataset, "targets": [{"kind": "class", "name": p["sup"], "column": rename["purpose"]}]}
    mc_cfg = {**cfg, "dataset": mc, "audits": [{"kind": "transport", "n_refits": 1, "n_bootstrap": 20,
                                                "mappings": ["raw", "platt"], "stresses": []}]}
    (outcome,) = run_config(parse_config(mc_cfg), registry=reg, base_dir=folder)
    assert outcome.status == "done", outcome.error
    ids["transport_mc"] = outcome.run_id
    old, new = _receipts_states(folder, host)
    rc_cfg = {**cfg, "audits": [{"kind": "receipts", "mode": "cube", "old": str(old), "new": str(new),
                                 "granularity": "items"}]}
    (outcome,) = run_config(parse_config(rc_cfg), registry=reg, base_dir=folder)
    assert outcome.status == "done", outcome.error
    ids["receipts"] = outcome.run_id
    return reg, ids
