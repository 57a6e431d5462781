"""A saved run as a model card (``skops.card``): model, data fingerprint, metrics, findings and the release verdict.

The card is built from the run's stored record only (tables, manifest,
config, model spec); no model file is loaded and nothing is unpickled
(``skops.card.Card(model=None)``). Its sections, in order:

* ``Model description`` — the audited model (kind, parameters, refit or
  audited as given) and the run's identity;
* ``Model description/Training and evaluation data`` — dataset name, its
  fingerprint, the grouping hash and the SHA-256 of every input;
* ``Model description/Evaluation Results`` — the headline metrics (for
  Transport: the headline slice's ID test and OOD means over refits, each
  named with its slice, the ECE on 15 equal-width bins, read with the release
  gate's keys; the held-out split for a model run; the stored key numbers
  otherwise);
* ``Findings`` — the plain-language findings (:func:`record_findings`);
* ``Release verdict`` — the release gate's default rules adjudicated on the
  grounds the given runs provide (unknown grounds are listed, never guessed);
* ``Feature shift`` — the top shifted features (Transport runs that have them);
* ``How to reproduce`` — the run's configuration as JSON.

Every text taken from the record is escaped for Markdown
(:func:`md_text`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from audit_core.receipts.adjudicate import adjudicate
from audit_core.runs.gate import DEFAULT_GATE_SCOPE, DEFAULT_GATE_YAML, compare_runs, extract_gate_grounds, gate_state
from audit_core.runs.keys import headline_key, read_key
from audit_core.runs.registry import RunRecord
from audit_core.safe_text import reveal
from audit_core.transport.headline import recorded_headline

from .gate import gate_findings
from .records import record_findings

__all__ = ["CARD_SECTIONS", "model_card", "write_model_card", "md_text", "card_metrics", "release_verdict"]

#: Top-level sections of every card, in order (subsections use ``/``).
CARD_SECTIONS = ("Model description", "Findings", "Release verdict", "Feature shift", "How to reproduce")

_MD = re.compile(r"([\\`*_{}\[\]<>#+!|~])")


def md_text(value: object) -> str:
    """Text from the record, safe in Markdown: invisible and text-moving characters shown (``<U+202E>``, see
    :func:`audit_core.safe_text.reveal`), special characters backslash-escaped (not parentheses: with the
    brackets escaped they cannot form a link), newlines as spaces."""
    return _MD.sub(r"\\\1", " ".join(reveal(value).split()))


#: The metrics a card lists for a transport run (binary, multi-class), all on the headline slice.
CARD_TRANSPORT_METRICS = (("auroc", "brier_score", "log_loss", "ece", "average_precision", "prevalence"),
                          ("accuracy", "auroc_macro", "brier_multiclass", "log_loss_multiclass", "ece_top"))


def _transport_metrics(record: RunRecord) -> dict[str, float]:
    """The headline slice's clean ID and OOD metrics, means over refits, each read with the release gate's key."""
    h = recorded_headline(record.manifest, record.config)
    if isinstance(h, str) or "results" not in record.tables:
        return {}
    cfg = (record.manifest or {}).get("config") or {}
    where = {"id": "ID test", "ood": f"OOD {cfg['target_value']}" if cfg.get("target_value") is not None else "OOD"}
    out = {}
    for metric in CARD_TRANSPORT_METRICS[int(h.multiclass)]:
        for domain in ("id", "ood"):
            v, _ = read_key(record.tables, headline_key(h, analysis="metrics", metric=metric, domain=domain))
            if isinstance(v, float):
                out[f"{metric} ({where[domain]}; {h.describe()})"] = v
    return dict(sorted(out.items()))


def card_metrics(record: RunRecord) -> dict[str, float]:
    """The headline metrics of a run, by name (see the module docstring); ``{}`` when none are stored."""
    if record.audit_kind == "transport":
        return _transport_metrics(record)
    metrics = record.tables.get("metrics")
    if record.audit_kind == "model" and metrics is not None and {"split", "metric", "value"} <= set(metrics.columns):
        rows = metrics[metrics["metric"] != "n_rows"]
        return {f"{r['metric']} ({r['split']})": float(r["value"]) for r in rows.to_dict("records")}
    key_numbers = (record.manifest or {}).get("key_numbers") or {}
    return {str(k): float(v) for k, v in key_numbers.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)}


def release_verdict(runs: Sequence[RunRecord], *, scope: str = DEFAULT_GATE_SCOPE,
                    rules_yaml: str = DEFAULT_GATE_YAML) -> tuple[str, str, pd.DataFrame]:
    """``(verdict, reason, grounds)`` of the release gate on ``runs`` (grounds: ``ground, value, status``)."""
    grounds = extract_gate_grounds(list(runs))
    adj = adjudicate(gate_state(grounds, deployment_scope=scope, rules_yaml=rules_yaml), missing="unknown")
    return adj.verdict, adj.reason, grounds.report[["ground", "value", "status"]]


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "—"
    return f"{v:.4g}" if isinstance(v, float) else md_text(v)


def _table(df: pd.DataFrame) -> dict[str, list[str]]:
    return {md_text(c): [_fmt(v) for v in df[c].tolist()] for c in df.columns}


def model_card(record: RunRecord, *, runs: Sequence[RunRecord] | None = None, scope: str = DEFAULT_GATE_SCOPE):
    """The model card of one saved run.

    Parameters
    ----------
    record : RunRecord
        The run (any audit kind).
    runs : sequence of RunRecord, optional
        The runs the release verdict reads (default: ``[record]``).
    scope : str, default ``DEFAULT_GATE_SCOPE``
        Deployment scope of the release verdict.

    Returns
    -------
    skops.card.Card
        With the sections :data:`CARD_SECTIONS` (``Feature shift`` only when
        the run stores a ``feature_shift`` table).
    """
    from skops.card import Card

    card = Card(model=None, template=None)
    spec = record.model_spec or {}
    who = (f"Run `{md_text(record.run_id)}` of the **{md_text(record.audit_kind)}** audit, created "
           f"{md_text(record.created_at)}, status {md_text(record.status)}. Model: **{md_text(record.model or '—')}**"
           f" ({'refit by the audit' if spec.get('refit', True) else 'audited as given, not refit'}).")
    card.add(**{"Model description": who})
    params = spec.get("params") or {}
    if params:
        card.add_table(**{"Model description/Model parameters": pd.DataFrame(
            {"parameter": list(params), "value": [json.dumps(v, sort_keys=True, default=str) for v in params.values()]})
            .pipe(_table)})
    hashes = (record.manifest or {}).get("inputs_sha256") or {}
    data = pd.DataFrame({"item": ["dataset", "fingerprint", "grouping hash", *[f"SHA-256 {k}" for k in hashes]],
                         "value": [record.dataset_name, record.dataset_fingerprint, record.grouping_hash or "—",
                                   *hashes.values()]})
    card.add_table(**{"Model description/Training and evaluation data": _table(data)})
    metrics = card_metrics(record)
    if metrics:
        card.add_metrics(description="Means over refits where the audit refits the model; a Transport run's "
                                     "metrics are its headline slice (named beside each), ECE on 15 equal-width bins.",
                         **{md_text(k): round(v, 6) for k, v in metrics.items()})
    else:
        card.add(**{"Model description/Evaluation Results": "This run stores no headline metrics."})
    findings = record_findings(record)
    card.add(**{"Findings": "\n".join(f"- **{f.severity}**: {md_text(f.text)}" for f in findings)
                or "No findings are generated from this run's stored tables."})
    verdict, reason, grounds = release_verdict(list(runs) if runs else [record], scope=scope)
    gate = compare_runs(list(runs) if runs else [record], list(runs) if runs else [record], scope=scope)
    said = "\n".join(f"- {md_text(f.text)}" for f in gate_findings(gate) if f.kind != "gate_change")
    card.add(**{"Release verdict": f"**{md_text(verdict)}** under the {md_text(scope)} scope (default release "
                                   f"rules): {md_text(reason)}\n\n{said}"})
    card.add_table(**{"Release verdict/Grounds": _table(grounds)})
    shift = record.tables.get("feature_shift")
    if shift is not None and not shift.empty:
        top = shift.sort_values("rank").head(10)[["rank", "feature", "kind", "psi", "p_value", "domain_auroc", "link"]]
        card.add_table(description="The most shifted raw features between source and target, ranked by PSI.",
                       **{"Feature shift": _table(top)})
    config = json.dumps(record.config, indent=1, sort_keys=True, default=str).replace("```", "` ` `")
    card.add(**{"How to reproduce": "The run's configuration:\n\n```json\n" + config + "\n```"})
    return card


def write_model_card(record: RunRecord, path: str | Path, **kw) -> Path:
    """Write :func:`model_card` of ``record`` as Markdown to ``path`` (UTF-8, atomically)."""
    from audit_core.runs.bundle import write_file

    return write_file(path, model_card(record, **kw).render().encode("utf-8"))
