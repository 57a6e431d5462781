"""Forecast grounds of the release gate: a rule that declares ``source: forecast`` reads a saved run's ``forecast``
table (label-free forecasts, ``docs/forecast.md``), never its measured results, and a measured rule never reads
forecast rows.

A rule in the gate's YAML may carry, beside ``id``, ``when``, ``then`` and ``note``:

* ``source``: ``measured`` (the default) or ``forecast``;
* ``assumption``: ``covariate``, ``label`` or ``both`` (default ``both``: the span of the two, the conservative
  reading), for a forecast rule only;
* ``method``: a method of that assumption (default: the declared one, :data:`DEFAULT_METHODS`).

A forecast rule names the grounds it is about as a measured rule would (``ood_ece > 0.05``); each such name is
rewritten to a **forecast ground** of its own, ``forecast_<method>_<ground>`` (``forecast_both_span_ood_ece``),
so a forecast value and a measured value are never one ground: the gate's state, its report and its receipts
label it ``forecast``. Its value is the mean over refits of the ``value`` column of the ``forecast`` table, on the
run's headline slice (model, mapping), for the quantity of :data:`FORECAST_QUANTITIES`; when any refit's forecast
is ``unknown`` the ground is UNKNOWN with ``unknown: <reason>`` in the report, so the rule can never pass (under
``on_unknown: refer`` it refers; ``on_unknown: skip`` is refused for forecast rules).

Refusals (:func:`check_sources`): a measured rule that reads a Transport ground of a side whose Transport runs hold
forecasts only (no measured target rows), or a forecast rule on a side whose Transport runs hold no ``forecast``
table, is an error naming the rule: the gate never falls back from one source to the other.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from audit_core.errors import fail, register_messages
from audit_core.forecast.estimates import DEFAULT_METHODS, METHODS
from audit_core.transport.headline import recorded_headline

from .keys import TableKey, read_key
from .registry import RunRecord

__all__ = ["DEFAULT_METHODS", "FORECAST_QUANTITIES", "ForecastRequest", "split_rules", "forecast_ground_name",
           "is_forecast_ground", "forecast_only", "has_forecast", "check_sources", "read_forecast_grounds",
           "RULE_SOURCES"]

register_messages({
    "GATE_RULE_SOURCE": ("Rule {rule_id!r}: {field} must be one of {allowed}; got {got!r}."),
    "GATE_FORECAST_GROUND": ("Rule {rule_id!r} reads {ground!r} from forecasts, but the forecast has no such "
                             "ground; forecast grounds: {allowed}."),
    "GATE_FORECAST_SKIP": ("Rule {rule_id!r} reads forecasts, and the norms say on_unknown: skip: an unknown "
                           "forecast would then pass unread. Use on_unknown: refer with forecast rules."),
    "GATE_MEASURED_ON_FORECAST": ("Rule {rule_id!r} reads measured grounds ({grounds}), but the Transport runs "
                                  "given ({runs}) hold forecasts only (no target labels yet). Declare "
                                  "`source: forecast` on the rule to read the forecast, or give a measured run."),
    "GATE_FORECAST_ON_MEASURED": ("Rule {rule_id!r} declares `source: forecast`, but no Transport run given "
                                  "({runs}) holds a forecast table. Drop `source: forecast` to read the measured "
                                  "values, or give a run with a forecast."),
})

#: What a rule's ``source`` may be.
RULE_SOURCES = ("measured", "forecast")
#: Methods a forecast rule may name, by assumption (``audit_core.forecast.METHODS`` and the span).
_METHODS = {a: tuple(m for m in (*METHODS, "both:span") if m.startswith(f"{a}:")) for a in DEFAULT_METHODS}
#: Gate ground -> the forecast quantity that forecasts it (``forecast_target``'s names); the last is forecast-only.
FORECAST_QUANTITIES = {"ood_ece": "ece", "worst_class_coverage_90": "marginal:worst_class_coverage@a=0.1",
                       "ood_selective_risk_80": "risk@s=0.8"}
#: Measured grounds read from Transport runs (a measured rule naming one needs a measured Transport run).
TRANSPORT_GROUNDS = ("ood_ece", "worst_class_coverage_90", "worst_subgroup_coverage_90", "n_transport_sensitive",
                     "n_transport_worse")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class ForecastRequest:
    """One forecast ground a rule reads: the gate ground it forecasts, the method and its ground name."""

    rule_id: str
    ground: str
    method: str

    @property
    def name(self) -> str:
        return forecast_ground_name(self.method, self.ground)

    @property
    def quantity(self) -> str:
        return FORECAST_QUANTITIES[self.ground]


def forecast_ground_name(method: str, ground: str) -> str:
    """``forecast_both_span_ood_ece``: the forecast ground of ``ground`` by ``method``."""
    return f"forecast_{method.replace(':', '_')}_{ground}"


def is_forecast_ground(name: str) -> bool:
    """Whether a ground name is a forecast ground (labelled ``forecast`` wherever the gate reports it)."""
    return str(name).startswith("forecast_")


def _rewrite(when: str, method: str) -> str:
    """``when`` with each forecastable ground name replaced by its forecast ground by ``method``."""
    return _NAME.sub(lambda m: forecast_ground_name(method, m.group(0)) if m.group(0) in FORECAST_QUANTITIES
                     else m.group(0), when)


def _choice(rule: Mapping, field: str, allowed: Sequence[str], default: str) -> str:
    v = rule.get(field, default)
    if v not in allowed:
        raise fail("GATE_RULE_SOURCE", rule_id=str(rule.get("id")), field=field, allowed=", ".join(allowed), got=v)
    return str(v)


def split_rules(data: Any) -> tuple[Any, list[ForecastRequest], list[tuple[str, list[str]]]]:
    """The gate rules with their ``source``/``assumption``/``method`` fields taken out and forecast grounds named.

    Parameters
    ----------
    data : object
        The parsed gate YAML (``{"norms": {"rules": [...]}, "authority": ...}``); anything else is returned as it is
        (the state parser reports it).

    Returns
    -------
    (data, requests, measured)
        The rules as the state parser reads them (a forecast rule's ``when`` rewritten to its forecast grounds),
        the forecast grounds the rules read, and per measured rule the Transport grounds it reads.
    """
    norms = data.get("norms") if isinstance(data, Mapping) else None
    rules = norms.get("rules") if isinstance(norms, Mapping) else None
    if not isinstance(rules, list):
        return data, [], []
    out_rules, requests, measured = [], [], []
    forecast_rules = []
    for rule in rules:
        if not isinstance(rule, Mapping):
            out_rules.append(rule)
            continue
        rid = str(rule.get("id"))
        source = _choice(rule, "source", RULE_SOURCES, "measured")
        clean = {k: v for k, v in rule.items() if k not in ("source", "assumption", "method")}
        when = rule.get("when")
        names = _NAME.findall(when) if isinstance(when, str) else []
        if source == "measured":
            for extra in ("assumption", "method"):
                if extra in rule:
                    raise fail("GATE_RULE_SOURCE", rule_id=rid, field="source (for a rule with " + extra + ")",
                               allowed="forecast", got="measured")
            measured.append((rid, [n for n in dict.fromkeys(names) if n in TRANSPORT_GROUNDS]))
            out_rules.append(clean)
            continue
        assumption = _choice(rule, "assumption", tuple(_METHODS), "both")
        method = _choice(rule, "method", _METHODS[assumption], DEFAULT_METHODS[assumption])
        read = [n for n in dict.fromkeys(names) if n in FORECAST_QUANTITIES]
        bad = [n for n in dict.fromkeys(names) if n not in FORECAST_QUANTITIES and n != "deployment_scope"
               and n not in ("and", "or", "not", "in", "true", "false")]
        if bad or not read:
            raise fail("GATE_FORECAST_GROUND", rule_id=rid, ground=bad[0] if bad else str(when),
                       allowed=", ".join(FORECAST_QUANTITIES))
        for g in read:
            requests.append(ForecastRequest(rid, g, method))
        clean["when"] = _rewrite(str(when), method)
        out_rules.append(clean)
        forecast_rules.append(rid)
    if forecast_rules and isinstance(norms, Mapping) and norms.get("on_unknown") == "skip":
        raise fail("GATE_FORECAST_SKIP", rule_id=forecast_rules[0])
    new = dict(data)
    new["norms"] = {**(norms if isinstance(norms, Mapping) else {}), "rules": out_rules}
    return new, requests, measured


def has_forecast(run: RunRecord) -> bool:
    """The run holds a non-empty ``forecast`` table."""
    df = run.tables.get("forecast")
    return isinstance(df, pd.DataFrame) and not df.empty


def forecast_only(run: RunRecord) -> bool:
    """A Transport run with a forecast and no measured target rows (no ``results`` row with ``domain == "ood"``)."""
    if run.audit_kind != "transport" or not has_forecast(run):
        return False
    res = run.tables.get("results")
    return not (isinstance(res, pd.DataFrame) and "domain" in res and (res["domain"].astype(str) == "ood").any())


def check_sources(runs: Sequence[RunRecord], requests: Sequence[ForecastRequest],
                  measured: Sequence[tuple[str, list[str]]]) -> None:
    """Refuse a rule whose source the side's Transport runs cannot give (module docstring).

    Raises
    ------
    AuditInputError
        ``GATE_MEASURED_ON_FORECAST`` or ``GATE_FORECAST_ON_MEASURED``, naming the rule and the runs.
    """
    if not requests and not any(grounds for _, grounds in measured):
        return
    transport = [r for r in runs if getattr(r, "audit_kind", None) == "transport"]
    if not transport:
        return  # no Transport run: the grounds are UNKNOWN (absent), as for any missing kind
    ids = ", ".join(r.run_id for r in transport)
    if all(forecast_only(r) for r in transport):
        for rid, grounds in measured:
            if grounds:
                raise fail("GATE_MEASURED_ON_FORECAST", rule_id=rid, grounds=", ".join(grounds), runs=ids)
    if requests and not any(has_forecast(r) for r in transport):
        raise fail("GATE_FORECAST_ON_MEASURED", rule_id=requests[0].rule_id, runs=ids)


def _slice(run: RunRecord) -> tuple[str, str] | str:
    """The run's headline (model, mapping) when its forecast has it, else the forecast's first slice."""
    df = run.tables["forecast"]
    if not {"model", "mapping"} <= set(df.columns):
        return "the forecast table lacks model/mapping columns"
    pairs = list(dict.fromkeys(zip(df["model"].astype(str), df["mapping"].astype(str), strict=True)))
    h = recorded_headline(run.manifest, run.config)
    if not isinstance(h, str) and (h.model, h.mapping) in pairs:
        return h.model, h.mapping
    return pairs[0]


def _read(run: RunRecord, req: ForecastRequest) -> tuple[float | None, str, TableKey | None]:
    """``(value, detail, key)`` of one forecast ground in one run; ``None`` and ``unknown: <reason>`` or why not."""
    picked = _slice(run)
    if isinstance(picked, str):
        return None, picked, None
    model, mapping = picked
    key = TableKey.of("forecast", "value", how="refit_mean", model=model, mapping=mapping, quantity=req.quantity,
                      method=req.method)
    df = run.tables["forecast"]
    need = {"model", "mapping", "quantity", "method", "status"}
    if not need <= set(df.columns):
        return None, f"the forecast table lacks column(s) {sorted(need - set(df.columns))}", None
    rows = df[(df["model"].astype(str) == model) & (df["mapping"].astype(str) == mapping)
              & (df["quantity"].astype(str) == req.quantity) & (df["method"].astype(str) == req.method)]
    unknown = rows[rows["status"].astype(str) != "forecast"]
    if not unknown.empty:
        reasons = unknown["reason"].fillna("").astype(str) if "reason" in unknown else pd.Series([""])
        reasons = reasons[reasons != ""]
        why = str(reasons.value_counts().index[0]) if len(reasons) else "its assumption's check failed"
        return None, f"unknown: {why} ({len(unknown)} of {len(rows)} refits; {key.rows()})", key
    v, detail = read_key(run.tables, key)
    if v is None or isinstance(v, str):
        return None, detail, key
    return float(v), f"forecast ({req.method}): {detail}", key


def read_forecast_grounds(runs: Sequence[RunRecord], requests: Sequence[ForecastRequest]
                          ) -> tuple[dict[str, float | None], list[dict[str, Any]], dict[str, tuple[str, TableKey]]]:
    """Read each requested forecast ground from the newest Transport run with a ``forecast`` table.

    Returns
    -------
    (values, rows, keys)
        ``values`` by forecast ground name (``None``: UNKNOWN); report rows (``ground, value, status, source,
        detail, description``; ``status`` ``present (forecast)``, ``unknown (forecast)`` or ``absent → UNKNOWN``);
        the key of each present ground.
    """
    values: dict[str, float | None] = {}
    rows: list[dict[str, Any]] = []
    keys: dict[str, tuple[str, TableKey]] = {}
    ordered = sorted((r for r in runs if r.audit_kind == "transport" and has_forecast(r)),
                     key=lambda r: r.created_at, reverse=True)
    for req in {r.name: r for r in requests}.values():
        desc = (f"forecast ({req.method}, no target labels) of {req.ground}: {req.quantity}, headline slice, mean "
                "over refits")
        if not ordered:
            values[req.name] = None
            rows.append({"ground": req.name, "value": None, "status": "absent → UNKNOWN", "source": "",
                         "detail": "no selected Transport run holds a forecast table", "description": desc})
            continue
        run = ordered[0]  # the newest forecast: never an older one behind an unknown
        v, detail, key = _read(run, req)
        values[req.name] = v
        status = "present (forecast)" if v is not None else (
            "unknown (forecast)" if detail.startswith("unknown:") else "absent → UNKNOWN")
        rows.append({"ground": req.name, "value": v, "status": status, "source": run.run_id, "detail": detail,
                     "description": desc})
        if v is not None and key is not None:
            keys[req.name] = (run.run_id, key)
    return values, rows, keys
