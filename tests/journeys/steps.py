"""The journey steps, shared by every real-data journey (``tests/journeys/test_journeys.py``).

A :class:`Journey` says what a user does with one public file as shipped; the
``ui_*`` functions do it in Chromium through the app, and the ``lib_*``
functions compute, in the test process, what the library returns on the same
configuration, so each journey can assert that the page shows those values.
"""
from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from browser import WAIT_MS

from audit_core.findings.cases import class_name
from components.report.document import MAX_TABLE_ROWS

LONG = WAIT_MS  # ms: a step on a busy 2-core machine (the suite's one ceiling for browser waits)
QUICK = 120_000

#: Small configurations, so that the whole suite fits CI.
FRAGILITY_CASES = 20  # the page's minimum
FRAGILITY_DRAWS = 2
TRANSPORT = {"n_refits": 1, "n_bootstrap": 10, "n_random_sets": 2, "stress_max_rows": 200}


@dataclass(frozen=True)
class Journey:
    """One dataset's journey: the files as shipped and what the user declares on them."""

    name: str
    files: tuple[Path, ...]
    target: dict[str, Any]  # a target definition as the library reads it (``target_from_dict``)
    domain: tuple[str, str, str]  # column, source value, target value (as the page shows them)
    rule: str  # one group rule line
    group_csv: str  # a column,group CSV
    column_names: tuple[str, ...] = ()  # typed for a file without a header
    accept_codes: bool = True  # click "Accept all proposed" (missing codes)
    accept_roles: bool = True  # click "Use the proposed roles"
    extras: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------------------------
# Browser helpers
# ----------------------------------------------------------------------------------------------------------------

def main(page):
    return page.locator('[data-testid="stMain"]').first


def idle(page, timeout: int = LONG) -> None:
    """Wait until the script run started by the last action has finished."""
    for _ in range(2):  # the running indicator appears a moment after the run starts
        page.wait_for_timeout(500)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=timeout)


def assert_clean(page) -> None:
    """No exception box, no traceback text, no progress bar left on the page."""
    idle(page)
    text = main(page).inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0, text[-3000:]
    assert "Traceback" not in text and "Error:" not in text, text[-3000:]
    bars = page.locator('[data-testid="stProgress"]')
    for _ in range(20):  # a bar that is being removed is not stuck
        if not bars.count():
            break
        page.wait_for_timeout(1000)
    shot = ""
    if bars.count():
        bars.first.scroll_into_view_if_needed()
        shot = Path(tempfile.mkdtemp(prefix="journey-bar-")) / "bar.png"  # never a fixed name: workers run side by side
        page.screenshot(path=str(shot))
    assert bars.count() == 0, ("a progress bar is left on the page", str(shot),
                               [bars.nth(i).inner_text() for i in range(bars.count())],
                               bars.first.evaluate("e => e.closest('[data-testid=stVerticalBlock]').innerText.slice(0, 500)")
                               if bars.count() else "")


def goto(page, url: str, title: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=title, exact=True).click()
    page.locator("h1").filter(has_text=title).first.wait_for(timeout=LONG)
    idle(page)


def expand(page, label: str) -> None:
    summary = main(page).locator("summary").filter(has_text=label).first
    details = summary.locator("xpath=..")
    if details.get_attribute("open") is None:
        summary.click()
    idle(page)


def _option(page, option: str, partial: bool):
    opts = page.get_by_role("option")
    return (opts.filter(has_text=option) if partial else page.get_by_role("option", name=option, exact=True)).first


def select(page, label: str, option: str, *, partial: bool = False) -> None:
    """Pick ``option`` (or the option containing it, ``partial``) in the selectbox labelled ``label``."""
    box = main(page).locator('[data-testid="stSelectbox"]').filter(
        has=page.locator("label", has_text=re.compile("^" + re.escape(label) + "$"))).first
    box.locator('[role="combobox"]').first.wait_for(timeout=LONG)
    _pick(page, box.locator('[role="combobox"]').first, option, partial)


def _pick(page, opener, option: str, partial: bool) -> None:
    """Open a dropdown and click ``option``; a click that landed during a rerun is retried."""
    for attempt in range(4):
        idle(page)
        opener.click()
        try:
            _option(page, option, partial).click(timeout=15_000)
            break
        except Exception:
            if attempt == 3:
                raise
            page.keyboard.press("Escape")
    idle(page)


def multiselect(page, label: str, options: list[str], *, partial: bool = False) -> None:
    """Make ``options`` the selection of the multiselect labelled ``label``."""
    box = main(page).locator('[data-testid="stMultiSelect"]').filter(
        has=page.locator("label", has_text=re.compile("^" + re.escape(label)))).first
    box.locator("input").first.wait_for(timeout=LONG)
    clear = box.locator('button[aria-label="Clear all"]')
    if clear.count():
        clear.first.click()
        idle(page)
    assert box.locator("[data-tag]").count() == 0
    for option in options:
        _pick(page, box.locator("input").first, option, partial)
    page.keyboard.press("Escape")


def number(page, label: str, value: float) -> None:
    box = main(page).get_by_role("spinbutton", name=label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    idle(page)


def text(page, label: str, value: str, *, area: bool = False) -> None:
    box = main(page).get_by_label(label, exact=True)
    box.fill(value)
    box.press("Control+Enter" if area else "Enter")
    idle(page)


def click(page, name: str) -> None:
    main(page).get_by_role("button", name=name, exact=True).first.click()
    idle(page)


def download(page, name: str) -> bytes:
    """Click a download button and return the file.

    A download button built from a callable is tied to one script run: a click that lands on the button of a run
    that a newer run has replaced (the previous step's rerun still finishing on a loaded machine) gets "Deferred
    file not found" on the server and no download. So wait for the page to be idle first, and click again, on
    the current button, if no download starts within QUICK.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        idle(page)
        try:
            with page.expect_download(timeout=QUICK if attempt < 2 else LONG) as info:
                main(page).get_by_role("button", name=name, exact=True).first.click()
            return Path(info.value.path()).read_bytes()
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def wait_text(page, text_: str, timeout: int = LONG):
    loc = main(page).get_by_text(text_, exact=False).first
    loc.wait_for(timeout=timeout)
    return loc


# ----------------------------------------------------------------------------------------------------------------
# The steps in the browser
# ----------------------------------------------------------------------------------------------------------------

def ui_upload(page, j: Journey, workdir: Path) -> None:
    """Step 1: upload the files as shipped, accept the proposed missing codes and roles, declare target and domain."""
    goto(page, "", "Data & groups")
    page.get_by_text("Upload a file").click(timeout=LONG)
    page.get_by_text("CSV, Parquet or Excel (.xlsx)").wait_for(timeout=LONG)
    page.locator('input[type="file"]').first.set_input_files([str(f) for f in j.files])
    wait_text(page, f"Stacked {len(j.files)} files" if len(j.files) > 1 else f"{j.files[0].name} · ")
    idle(page)
    if j.column_names:
        expand(page, "Read options")
        text(page, "Column names for a file without a header (comma-separated; blank: col_1, col_2, …)",
             ",".join(j.column_names))
        wait_text(page, "Column names as given in Read options", QUICK)
    if j.accept_codes:
        click(page, "Accept all proposed")
    if j.accept_roles and main(page).get_by_role("button", name="Use the proposed roles").count():
        click(page, "Use the proposed roles")
    assert_clean(page)
    # the target definition
    t = j.target
    expand(page, "Add a target definition")
    main(page).locator('[data-testid="stRadio"]').filter(has_text="Kind").get_by_text(t["kind"], exact=True).click()
    idle(page)
    text(page, "Name", t["name"])
    if t["kind"] == "class":
        select(page, "Class column", t["column"])
        select(page, "Positive class", str(t["positive"]))
    else:
        select(page, "Numeric column", t["column"])
        select(page, "Operator", t["op"])
        number(page, "Threshold", t["threshold"])
    click(page, "Add definition")
    wait_text(page, "Primary target (used for training)")
    column, source, target = j.domain
    select(page, "Domain", column)
    select(page, "Source domain (training)", source)
    select(page, "Target domain", target)
    assert_clean(page)


def ui_groups(page, j: Journey, workdir: Path) -> None:
    """Step 2: one group rule, then a column,group CSV."""
    expand(page, "Assign groups by rules or CSV")
    text(page, "Rules", j.rule, area=True)
    click(page, "Apply rules")
    csv = workdir / f"{j.name}_groups.csv"
    csv.write_text(j.group_csv)
    main(page).locator('[data-testid="stFileUploader"]').filter(has_text="Upload a column,group CSV").locator(
        'input[type="file"]').set_input_files(str(csv))
    idle(page)
    expand(page, "Assign groups by rules or CSV")  # a rerun may have closed it
    main(page).get_by_role("button", name="Apply CSV").wait_for(timeout=LONG)
    click(page, "Apply CSV")
    assert_clean(page)


def ui_train(page, kind: str, label: str) -> str:
    """Step 3: train one zoo model; returns the success message."""
    select(page, "Model", label)
    click(page, "Train model")
    msg = wait_text(page, f"Model ready: {kind} ").inner_text()
    assert_clean(page)
    return msg


def ui_fragility(page) -> str:
    """Step 4: a small Fragility audit, then pick "Confident and fragile" in the inspector. Returns the headline."""
    goto(page, "", "Fragility")
    number(page, "Case-sample cap", FRAGILITY_CASES)
    number(page, "Draws R for stochastic operators", FRAGILITY_DRAWS)
    click(page, "Run fragility audit")
    headline = wait_text(page, f"Certified {FRAGILITY_CASES} cases").inner_text()
    assert_clean(page)
    main(page).locator('[data-testid="stRadio"]').filter(has_text="Pick from").get_by_text(
        "Confident and fragile (the certificate flips within K groups)", exact=True).click()
    idle(page)
    assert_clean(page)
    return headline


def ui_case_caption(page, key: str) -> str:
    """The inspector's caption once it shows case ``key`` (not the case shown before the pick was redrawn)."""
    wait_text(page, f"Case trajectory · {key}")
    return wait_text(page, "Predicted '").inner_text()


def ui_transport(page) -> list[str]:
    """Step 5: Transport on the declared domain with all stresses; returns the findings panel's lines."""
    goto(page, "", "Transport")
    number(page, "Refits R", TRANSPORT["n_refits"])
    number(page, "Bootstrap resamples", TRANSPORT["n_bootstrap"])
    number(page, "Random sets J per refit", TRANSPORT["n_random_sets"])
    number(page, "Row cap per test set (stress)", TRANSPORT["stress_max_rows"])
    click(page, "Lock tolerances and headline")
    wait_text(page, "Tolerances and headline slice locked")
    click(page, "Run transport audit")
    wait_text(page, "Saved to the registry as run")
    assert_clean(page)
    panel = page.locator(".st-key-view_tr_findings").first
    return [line for line in panel.inner_text().splitlines() if line.strip()]


def ui_gate(page, old: list[str], new: list[str]) -> dict:
    """Step 6: the release gate, old runs against new runs; returns the downloaded gate cube."""
    goto(page, "", "Receipts")
    multiselect(page, "Old: runs", [r[-8:] for r in old], partial=True)
    multiselect(page, "New: runs", [r[-8:] for r in new], partial=True)
    click(page, "Execute gate cube")
    wait_text(page, "Release verdict")
    assert_clean(page)
    return json.loads(download(page, "Download gate cube (JSON)"))


def ui_report(page, run_label: str) -> bytes:
    """Step 7: open a run on Runs & reports and download its HTML report."""
    goto(page, "", "Runs & reports")
    select(page, "Run", run_label[-8:], partial=True)
    data = download(page, "HTML report")
    assert_clean(page)
    return data


# ----------------------------------------------------------------------------------------------------------------
# The same configuration through the library, in the test process
# ----------------------------------------------------------------------------------------------------------------

def lib_table(j: Journey):
    """The files read as the page reads them after the user's choices (names typed, proposed codes accepted)."""
    from audit_core.data.intake import read_table, read_tables
    from audit_core.data.intake.options import ReadOptions
    from audit_core.limits import Limits

    def read(codes: tuple) -> Any:
        opts = ReadOptions.from_limits(Limits.from_env(), missing_codes=codes, column_names=j.column_names)
        files = [(f.read_bytes(), f.name) for f in j.files]
        return read_table(files[0][0], name=files[0][1], options=opts) if len(files) == 1 else read_tables(tuple(files), options=opts)

    table = read(())
    if j.accept_codes:
        applied = [(c, code) for c, code, _ in table.report.missing_applied if code != ""]
        proposed = [p.key for p in table.report.missing_proposals]
        table = read(tuple(dict.fromkeys(applied + proposed)))
    return table


def lib_config(j: Journey, table) -> tuple[Any, dict[str, str]]:
    """The declaration: inferred roles (proposals accepted), the target, the domain, and the groups."""
    from audit_core.data.dataset import DatasetConfig
    from audit_core.data.groups import GroupRule, apply_group_rules, parse_group_csv
    from audit_core.data.roles import infer_roles, propose_roles

    frame = table.frame
    roles = dict(infer_roles(frame))
    if j.accept_roles:
        roles.update({c: p.role for c, p in propose_roles(frame, roles).items()})
    groups = {c: c for c in frame.columns}
    kind, _, rest = j.rule.partition(":")
    pattern, _, group = rest.rpartition("->")
    groups.update(apply_group_rules(list(frame.columns), [GroupRule(pattern=pattern.strip(), group=group.strip(),
                                                                    kind=kind.strip())]))
    groups.update(parse_group_csv(j.group_csv.encode(), list(frame.columns)))
    column, source, target = j.domain
    values = {str(v): v for v in pd.unique(frame[column].dropna())}
    plain = {k: v.item() if isinstance(v, np.generic) else v for k, v in values.items()}
    config = DatasetConfig(name=table.name, targets=(dict(j.target),), primary_target=j.target["name"], roles=roles,
                           domain_column=column, source_domain=plain[source], target_domain=plain[target])
    return config, groups


def lib_workspace(table, config, groups, kind: str):
    from audit_core.data.dataset import build_dataset
    from audit_core.models.training import train_workspace
    from audit_core.models.zoo import ModelSpec

    return train_workspace(build_dataset(table.frame, config), spec=ModelSpec(kind=kind, seed=0), raw_groups=groups,
                           baseline_kind="mean")


def lib_fragility(ws):
    """The Fragility audit with the page's defaults and the journey's small settings."""
    from audit_core.fragility.audit import AuditOptions, run_fragility_audit
    from audit_core.fragility.engine import FragilityConfig
    from audit_core.fragility.operators import FAMILIES
    from audit_core.limits import Limits

    lim = Limits.from_env()
    options = AuditOptions(
        config=FragilityConfig(k=min(5, ws.grouping.n_groups), path="static", families=FAMILIES,
                               n_draws=FRAGILITY_DRAWS, seed=0),
        max_cases=FRAGILITY_CASES, case_seed=0, stress_seed=0, missing_codes={}, baseline_sensitivity=False,
        exact_max_groups=lim.max_exact_groups, max_quadratic_groups=lim.max_quadratic_groups,
        max_cells=lim.max_fragility_cells)
    return run_fragility_audit(ws, options=options)


def confident_fragile_case(audit):
    """The case the inspector opens first: the documented rule (docs/fragility.md), written out here.

    Among confident cases (p̂ ≥ 0.8) whose certificate flips within K, the fewest groups to flip, then the highest
    p̂; else any case that flips; else the most confident case.
    """
    s = audit.certificates
    flips = s["k_star"] <= audit.batch.protocol.k
    pool = s[(s["p_hat"] >= 0.8) & flips]
    pool = pool if len(pool) else s[flips]
    if len(pool):
        key = str(pool.sort_values(["k_star", "p_hat"], ascending=[True, False], kind="stable")["key"].iloc[0])
    else:
        key = str(s.sort_values("p_hat", ascending=False, kind="stable")["key"].iloc[0])
    i = int(np.flatnonzero(s["key"].astype(str).to_numpy() == key)[0])
    return key, audit.batch.certificate(i)


def lib_transport(table, config, ws):
    from dataclasses import replace

    from audit_core.data.dataset import build_dataset
    from audit_core.transport import DEFAULT_TOLERANCES, TransportConfig, model_options, run_transport

    opts, _ = model_options(ws)
    ds = build_dataset(table.frame, replace(config))
    cfg = TransportConfig.from_dataset(
        ds, tolerances=dict(DEFAULT_TOLERANCES), strata_columns=(), subgroup_columns=(), seed=0, **opts,
        mappings=("raw", "platt", "isotonic"), alphas=(0.05, 0.1, 0.2), selection_rates=(0.5, 0.7, 0.8, 0.9, 0.95),
        stresses=("target_definition", "degradation"), degradation_m=3, **TRANSPORT)
    return run_transport(ds.frame, config=cfg)


# ----------------------------------------------------------------------------------------------------------------
# Grounds by hand, from the stored tables (the definitions of docs/receipts.md, written out)
# ----------------------------------------------------------------------------------------------------------------

def hand_grounds(fragility_run, transport_run=None) -> dict[str, float]:
    m = fragility_run.tables["metrics"]
    s = fragility_run.tables["certificates"]
    out = {
        "test_auroc": m.loc[(m["split"] == "test") & (m["metric"] == "auroc"), "value"].item(),
        "test_log_loss": m.loc[(m["split"] == "test") & (m["metric"] == "log_loss"), "value"].item(),
        "brittle_share_confident": s.loc[s["p_hat"] >= 0.8, "donor_any"].astype(float).mean(),
        "mean_fds": s["fds"].mean(),
    }
    if transport_run is None:
        return out
    t = transport_run.tables["results"]
    cfg = transport_run.config
    # the headline slice, by its written rule: the first model, Platt where fitted (else the first mapping)
    mapping = "platt" if "platt" in cfg["mappings"] else cfg["mappings"][0]
    model, target = cfg["models"][0], cfg["targets"][0]["name"]
    clean = t[(t["condition"] == "clean") & (t["domain"] == "ood") & (t["model"] == model) & (t["mapping"] == mapping)
              & (t["weighting"] == "unweighted") & (t["target_definition"] == target) & (t["refit"] >= 0)]
    ece = clean[(clean["analysis"] == "metrics") & (clean["metric"] == "ece")]
    cov = clean[(clean["analysis"] == "conformal_marginal") & (clean["metric"] == "worst_class_coverage")
                & np.isclose(clean["alpha"], 0.1)]
    v = transport_run.tables["verdicts"]
    v = v[(v["model"] == model) & (v["mapping"] == mapping) & (v["weighting"] == "unweighted")]
    out.update(
        ood_ece=ece.groupby("refit")["value"].mean().mean(),
        worst_class_coverage_90=cov.groupby("refit")["value"].mean().mean(),
        n_transport_sensitive=float((v["verdict"] == "transport-sensitive").sum()),
        n_transport_worse=float(((v["verdict"] == "transport-sensitive") & (v["direction"] == "worse")).sum()),
    )
    return out


VALID = {"test_auroc": (0, 1), "test_log_loss": (0, np.inf), "brittle_share_confident": (0, 1), "mean_fds": (0, 1),
         "ood_ece": (0, 1), "worst_class_coverage_90": (0, 1), "n_transport_sensitive": (0, np.inf),
         "n_transport_worse": (0, np.inf)}


class Tables(HTMLParser):
    """The ``<table id=…>`` elements of an HTML report, as lists of rows of cell text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._id: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._id = a.get("id") or f"table{len(self.tables)}"
            self.tables[self._id] = []
        elif tag == "tr" and self._id:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._id:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "table":
            self._id = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def report_tables(html: bytes) -> dict[str, pd.DataFrame]:
    p = Tables()
    p.feed(html.decode("utf-8"))
    return {k: pd.DataFrame(rows[1:], columns=rows[0]) for k, rows in p.tables.items() if rows}


# ----------------------------------------------------------------------------------------------------------------
# One whole journey
# ----------------------------------------------------------------------------------------------------------------

def _run_id(reg, kind: str, model: str | None = None) -> str:
    runs = reg.list_runs(audit_kind=kind)
    if model is not None:
        runs = runs[runs["model"] == model]
    assert len(runs) == 1, runs
    assert runs["status"].iloc[0] == "done"
    return str(runs["run_id"].iloc[0])


def _gate_grounds(state: dict) -> dict[str, float | None]:
    return {k: v.get("value") for k, v in state["grounds"].items() if k != "deployment_scope"}


def run_journey(page, url: str, j: Journey, registry_path: Path, workdir: Path) -> dict[str, Any]:
    """All seven steps of ``j``, each checked against the library; returns what was measured."""
    from audit_core.findings import transport_findings
    from audit_core.models.zoo import ZOO
    from audit_core.runs.registry import RunRegistry

    page.goto(url, wait_until="domcontentloaded")
    page.get_by_text("which confident predictions collapse", exact=False).wait_for(timeout=LONG)
    # 1-2: upload, roles, target, domain, groups
    ui_upload(page, j, workdir)
    table = lib_table(j)
    config, groups = lib_config(j, table)
    wait_text(page, f"{table.frame.shape[0]:,} rows × {table.frame.shape[1]:,} columns")
    ui_groups(page, j, workdir)
    # 3: LightGBM, then logistic regression (the model the audits examine)
    reg = RunRegistry(registry_path)
    workspaces = {}
    for kind in ("lightgbm", "logistic_regression"):
        msg = ui_train(page, kind, ZOO[kind][0])
        ws = workspaces[kind] = lib_workspace(table, config, groups, kind)
        auc = ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0]
        assert f"Model ready: {kind} · held-out AUROC {auc:.3f} · {ws.grouping.n_groups} evidence groups" in msg
        stored = reg.load(_run_id(reg, "model", kind))
        merged = stored.tables["metrics"].merge(ws.metrics, on=["split", "metric"], suffixes=("_page", "_lib"))
        assert len(merged) == len(ws.metrics) > 0
        np.testing.assert_array_equal(merged["value_page"].to_numpy(float), merged["value_lib"].to_numpy(float))
        assert ws.grouping.raw_map() == {c: g for c, g in groups.items() if c in ws.grouping.raw_map()}
    ws = workspaces["logistic_regression"]
    # 4: Fragility and a confident fragile case
    headline = ui_fragility(page)
    audit = lib_fragility(ws)
    s = audit.certificates
    assert f"Certified {len(s)} cases · mean k* {s['k_star'].mean():.2f} · mean FDS {s['fds'].mean():.3f}" in headline
    key, cert = confident_fragile_case(audit)
    caption = ui_case_caption(page, key)
    names = ws.dataset.primary.class_names
    flips = (f"flips to '{class_name(names, int(cert.path_labels[cert.k_star]))}' after {cert.k_star} "
             f"group{'s' if cert.k_star != 1 else ''}")
    assert caption.startswith(f"Predicted '{class_name(names, cert.y_hat)}' for {ws.dataset.primary.name} "
                              f"with probability {cert.p_hat:.3f} (actually '"), caption
    assert caption.endswith(f"'); {flips}. Margin {cert.m0:.3f}, RCMA {cert.rcma:.3f}, d {cert.d:.2f}, "
                            f"FDS {cert.fds:.3f}."), caption
    fr = reg.load(_run_id(reg, "fragility"))
    for col in ("k_star", "fds", "p_hat", "rcma"):
        np.testing.assert_array_equal(fr.tables["certificates"][col].to_numpy(float), s[col].to_numpy(float))
    # 5: Transport on the declared domain, all stresses
    lines = ui_transport(page)
    result = lib_transport(table, config, ws)
    cfg = result.manifest["config"]
    expected = transport_findings(result, selection_rate=0.8)  # the headline slice: Platt on the first model
    assert expected and all(any(f.text in line for line in lines) for f in expected), (lines, [f.text for f in expected])
    tr = reg.load(_run_id(reg, "transport"))
    stored, lib = tr.tables["results"].reset_index(drop=True), result.table.reset_index(drop=True)
    assert stored.shape == lib.shape and set(stored["analysis"]) >= {"metrics", "conformal_marginal"}
    assert any(a.startswith("degradation") for a in stored["analysis"].unique())
    np.testing.assert_array_equal(stored["value"].to_numpy(float), lib["value"].to_numpy(float))
    # 6: the release gate, the Fragility run against Fragility + Transport
    gate = ui_gate(page, [fr.run_id], [fr.run_id, tr.run_id])
    for state, hand in ((gate["old"], hand_grounds(fr)), (gate["new"], hand_grounds(fr, tr))):
        shown = _gate_grounds(state)
        for name, value in hand.items():
            lo, hi = VALID[name]
            assert shown[name] is not None and lo <= shown[name] <= hi, (name, shown[name])
            assert shown[name] == value, (name, shown[name], value)
        assert all(shown[g] is None for g in set(shown) - set(hand)), shown
    # 7: the HTML report of the Transport run
    html = ui_report(page, tr.run_id)
    tables = report_tables(html)
    verdicts = tables["verdict-table"]
    stored_verdicts = tr.tables["verdicts"].head(MAX_TABLE_ROWS)  # the report caps its tables (full: Parquet)
    assert len(verdicts) == len(stored_verdicts) > 0
    assert list(verdicts["verdict"]) == [str(v) for v in stored_verdicts["verdict"]]
    assert f"({len(tr.tables['verdicts']):,} rows × ".encode() in html
    return {"rows": table.frame.shape[0], "columns": table.frame.shape[1], "groups": ws.grouping.n_groups}
