"""Widgets of the Runs & reports page: browse, open, compare, delete, export and import runs.

Nothing here recomputes an audit: a run is shown from its stored tables, and
its figures come from :data:`components.report.REPORT_FIGURES`, the same
registry the HTML report uses.

Widget keys: value widgets ``ru_``, buttons ``act_ru_``, uploads ``up_ru_``,
display elements ``view_ru_``.

Release gate: :data:`RECEIPT_GATE_HOOK` is called with the two compared runs
and returns a short markdown text or ``None``. The default runs
:func:`audit_core.runs.gate.compare_runs` (scope ``production``, default
rules) and shows both verdicts, PASSED/FAILED and the gate's receipt.
"""
from __future__ import annotations

import dataclasses
import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from audit_core.errors import AuditInputError, fail
from audit_core.runs.bundle import export_bundle, import_bundle
from audit_core.runs.export import parquet_file_names, parquet_zip
from audit_core.runs.compare import change_directions, compare_runs_tables, largest_changes
from audit_core.runs.gate import compare_runs
from audit_core.runs.registry import RunRecord
from components.feedback import code, guarded, md_escape
from components.glossary import table as show_table
from components.report import chromium_executable, figures_for, key_numbers_frame, render_report, write_pdf
from components.state import PERSIST, registry, workspace_key

__all__ = [
    "RECEIPT_GATE_HOOK",
    "compare_section",
    "default_receipt_gate",
    "filtered_runs",
    "import_section",
    "run_view_section",
]

_PENDING_DELETE = workspace_key("runs_pending_delete")  # session key (not a widget): run id awaiting confirmation
_PDF_READY = workspace_key("runs_pdf_ready")  # session key (not a widget): run id whose PDF summary was asked for
_CARD_ASKED = workspace_key("runs_card_asked")  # session key (not a widget): run ids whose model card was asked for
_ALL = "(all)"


def default_receipt_gate(record_a: RunRecord, record_b: RunRecord) -> str | None:
    """The release gate between the two compared runs (:func:`audit_core.runs.gate.compare_runs`).

    Returns
    -------
    str
        Markdown: both release verdicts, PASSED/FAILED, the gate's receipt
        (the minimal sets that account for a changed verdict) and the absent
        grounds, with a pointer to the Receipts page's release gate, which
        shows the executed cube for these runs.
    """
    r = compare_runs(record_a, record_b)
    absent = f" Absent grounds (UNKNOWN): {', '.join(map(code, r.grounds_absent))}." if r.grounds_absent else ""
    return (f"Release gate (scope {md_escape(r.scope)}): A **{md_escape(r.verdict_a)}** → "
            f"B **{md_escape(r.verdict_b)}**: **{'PASSED' if r.passed else 'FAILED'}** · receipt "
            f"{code(r.receipt_text)}.{absent} The executed cube is on the Receipts page (release gate), or run "
            f"{code(f'reliability-audit gate {record_a.run_id} {record_b.run_id}')}.")


#: ``hook(record_a, record_b) -> markdown | None``; see the module docstring.
RECEIPT_GATE_HOOK: Callable[[RunRecord, RunRecord], str | None] = default_receipt_gate


def _label(runs: pd.DataFrame) -> Callable[[str], str]:
    info = runs.set_index("run_id")

    def fmt(run_id: str) -> str:
        if run_id not in info.index:
            return run_id
        r = info.loc[run_id]
        return (f"{r['created_at'][:19].replace('T', ' ')} · {run_id[-8:]} · {r['audit_kind']} · {r['dataset_name']} · "
                f"{r['model'] or '—'} · {r['status']}")

    return fmt


def filtered_runs() -> pd.DataFrame:
    """Filter widgets (kind, model, dataset fingerprint, date range) and the filtered run list."""
    runs = registry().list_runs()
    st.caption(f"Registry: {code(registry().path)} · {len(runs)} saved run(s)")
    if registry().read_only:  # browsing works; every save says why it is off
        st.info(md_escape(fail("REGISTRY_READ_ONLY_NOTICE", reason=registry().read_only_reason).message), icon=":material/lock:")
    if runs.empty:
        return runs
    c1, c2, c3, c4 = st.columns([1, 1, 2, 2])
    kinds = c1.multiselect("Audit kind", sorted(runs["audit_kind"].unique()), key="ru_kind", persist_state=PERSIST)
    models = c2.multiselect("Model", sorted(runs["model"].dropna().unique()), key="ru_model", persist_state=PERSIST)
    fps = runs.drop_duplicates("dataset_fingerprint")
    fp_label = dict(zip(fps["dataset_fingerprint"], fps["dataset_name"], strict=True))
    fingerprint = c3.selectbox(
        "Dataset (fingerprint)",
        [_ALL, *fp_label],
        key="ru_fingerprint", persist_state=PERSIST,
        format_func=lambda f: f if f == _ALL else f"{fp_label[f]} · {f[:12]}",
    )
    created = pd.to_datetime(runs["created_at"], utc=True, format="ISO8601")
    lo, hi = created.min().date(), created.max().date()
    dates = c4.date_input("Created between", value=(lo, hi), key="ru_dates", persist_state=PERSIST)
    out = runs
    if kinds:
        out = out[out["audit_kind"].isin(kinds)]
    if models:
        out = out[out["model"].isin(models)]
    if fingerprint != _ALL:
        out = out[out["dataset_fingerprint"] == fingerprint]
    if isinstance(dates, (tuple, list)) and len(dates) == 2:
        day = pd.to_datetime(out["created_at"], utc=True, format="ISO8601").dt.date
        out = out[(day >= dates[0]) & (day <= dates[1])]
    st.dataframe(out, hide_index=True, key="view_ru_runs")
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def _load(run_id: str, updated_at: str, path: str) -> RunRecord:
    # Keyed by updated_at too, so a changed run is never served stale. Plain
    # dicts instead of the read-only mapping proxies, which cannot be pickled.
    record = registry().load(run_id)
    return dataclasses.replace(record, tables=dict(record.tables), artifacts=dict(record.artifacts))


def _clear_caches() -> None:
    _load.clear()
    _report_bytes.clear()
    _card_bytes.clear()


@st.cache_data(show_spinner="Building the report…", max_entries=4)
def _report_bytes(run_id: str, updated_at: str, path: str) -> bytes:
    return render_report(_load(run_id, updated_at, path)).encode("utf-8")


@st.cache_data(show_spinner="Building the model card…", max_entries=4)
def _card_bytes(run_id: str, updated_at: str, path: str) -> bytes:
    from audit_core.findings.card import model_card

    return model_card(_load(run_id, updated_at, path)).render().encode("utf-8")


def _record(runs: pd.DataFrame, run_id: str) -> RunRecord:
    updated = str(runs.set_index("run_id").loc[run_id, "updated_at"])
    return _load(run_id, updated, str(registry().path))


def show_record(record: RunRecord, *, key: str) -> None:
    """A saved run as stored: key numbers, figures (rebuilt from its tables), tables, manifest."""
    st.dataframe(key_numbers_frame(record), hide_index=True, key=f"view_ru_{key}_key_numbers")
    if record.error:
        st.error(f"This run failed: {md_escape(record.error)}", icon=":material/error:")
    try:
        figs = figures_for(record)
    except AuditInputError as err:  # tables saved by another version or edited: show them without figures
        st.warning(md_escape(err.message), icon=":material/warning:")
        figs = None
    if figs == [] and record.tables:
        st.caption(f"No figures are registered for audit kind {code(record.audit_kind)}; showing its tables.")
    for i, (_title, fig) in enumerate(figs or []):
        st.plotly_chart(fig, key=f"view_ru_{key}_fig_{i}")
    for name, df in record.tables.items():
        with st.expander(f"Table {code(name)} · {df.shape[0]:,} × {df.shape[1]:,}"):
            show_table(df, hide_index=True, key=f"view_ru_{key}_table_{name}")
    with st.expander("Manifest (seeds, input hashes, versions)"):
        st.json(record.manifest, expanded=True)
    with st.expander("Configuration"):
        st.json(record.config, expanded=True)


def run_view_section(runs: pd.DataFrame) -> None:
    """Open one run, export it, or delete it (with a confirmation step)."""
    if runs.empty:
        st.info("No runs match the filters.")
        return
    ids = list(runs["run_id"])
    run_id = st.selectbox("Run", ids, key="ru_open", persist_state=PERSIST, format_func=_label(runs))
    with guarded("opening the run"):
        record = _record(runs, run_id)
        c1, c2, c3, c5, c4 = st.columns(5)
        safe = run_id.replace(":", "_")
        c1.download_button(
            "HTML report",
            # a callable: the report is built when the button is clicked (then cached), not on every render
            data=functools.partial(_report_bytes, run_id, record.updated_at, str(registry().path)),
            file_name=f"report-{safe}.html",
            mime="text/html",
            key="act_ru_dl_html",
        )
        c2.download_button(
            "JSON bundle", data=functools.partial(export_bundle, record), file_name=f"run-{safe}.json", mime="application/json",
            key="act_ru_dl_bundle",
        )
        clash = _parquet_clash(record)
        c3.download_button(
            "Parquet tables (zip)", data=functools.partial(parquet_zip, record), file_name=f"tables-{safe}.zip", mime="application/zip",
            key="act_ru_dl_parquet",
            disabled=clash is not None, help=clash,
        )
        _model_card(c5, run_id, record)
        if c4.button("Delete run…", key="act_ru_delete", disabled=registry().read_only,
                     help="The registry is open read-only." if registry().read_only else None):
            st.session_state[_PENDING_DELETE] = run_id
        _pdf_summary(run_id, record)
        _delete_confirmation(run_id)
        for weak in record.manifest.get("warnings") or ():  # what the run found weak (short partitions, a stress not run)
            st.warning(md_escape(weak["message"]), icon=":material/warning:")
        show_record(record, key="open")


@st.cache_data(show_spinner="Printing the one-page summary with Chromium…", max_entries=4)
def _pdf_bytes(run_id: str, updated_at: str, path: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="audit-report-") as tmp:
        html = Path(tmp) / "report.html"
        html.write_bytes(_report_bytes(run_id, updated_at, path))
        return write_pdf(html, Path(tmp) / "summary.pdf").read_bytes()


def _pdf_summary(run_id: str, record: RunRecord) -> None:
    """The report's one-page summary as a PDF (headless Chromium), printed on demand."""
    if chromium_executable() is None:
        st.caption("PDF summary: Chromium is not installed on this server; printing the HTML report from a "
                   "browser gives the same one-page summary.")
        return
    if st.session_state.get(_PDF_READY) != run_id:
        if st.button("PDF summary (one page)…", key="act_ru_pdf"):
            st.session_state[_PDF_READY] = run_id
            st.rerun()
        return
    st.download_button("Download the PDF summary", data=_pdf_bytes(run_id, record.updated_at, str(registry().path)),
                       file_name=f"summary-{run_id.replace(':', '_')}.pdf", mime="application/pdf", key="act_ru_dl_pdf")


_CARD_HELP = "A skops model card: model, data fingerprint, metrics, findings and the release verdict."


def _model_card(col: Any, run_id: str, record: RunRecord) -> None:
    """The model card on request: building one takes seconds, so it is made when asked for, then cached per run."""
    asked = st.session_state.get(_CARD_ASKED) or ()
    if run_id not in asked:
        if col.button("Make model card", key="act_ru_card", help=_CARD_HELP):
            st.session_state[_CARD_ASKED] = (*asked, run_id)
            st.rerun()
        return
    col.download_button(
        f"Model card · {run_id[-8:]}", data=_card_bytes(run_id, record.updated_at, str(registry().path)),
        file_name=f"model-card-{run_id.replace(':', '_')}.md", mime="text/markdown", key="act_ru_dl_card",
        help=f"{_CARD_HELP} Run {run_id}.",
    )


def _delete_confirmation(run_id: str) -> None:
    if st.session_state.get(_PENDING_DELETE) != run_id:
        return
    st.warning(f"Delete run {code(run_id)} with all its tables? This cannot be undone.", icon=":material/warning:")
    c1, c2 = st.columns(2)
    if c1.button("Yes, delete it", type="primary", key="act_ru_confirm_delete"):
        with guarded("deleting the run"):
            registry().delete(run_id)
            st.session_state[_PENDING_DELETE] = None
            st.session_state.pop("ru_open", None)
            _clear_caches()
            st.success(f"Deleted run {code(run_id)}.")
            st.rerun()
    if c2.button("Cancel", key="act_ru_cancel_delete"):
        st.session_state[_PENDING_DELETE] = None
        st.rerun()


def compare_section(runs: pd.DataFrame) -> None:
    """Two runs side by side: metric deltas, verdict changes and the release-gate hook."""
    if len(runs) < 2:
        st.info("Save at least two runs (matching the filters) to compare them.")
        return
    ids = list(runs["run_id"])
    fmt = _label(runs)
    c1, c2 = st.columns(2)
    a = c1.selectbox("Run A (baseline)", ids, index=min(1, len(ids) - 1), key="ru_cmp_a", persist_state=PERSIST, format_func=fmt)
    b = c2.selectbox("Run B (candidate)", ids, index=0, key="ru_cmp_b", persist_state=PERSIST, format_func=fmt)
    if a == b:
        st.info("Pick two different runs.")
        return
    with guarded("comparing the runs"):
        ra, rb = _record(runs, a), _record(runs, b)
        if ra.dataset_fingerprint != rb.dataset_fingerprint:
            st.caption("The two runs audited different data (dataset fingerprints differ).")
        deltas = compare_runs_tables(ra.tables, rb.tables)
        changes = deltas.pop("verdict changes", None)
        # the summary first: changes by direction, the gate's receipt, the five largest changes; details on demand
        if changes is not None:
            counts = change_directions(changes).value_counts()
            cols = st.columns(4)
            for col, what in zip(cols, ("better", "worse", "changed", "only in one run"), strict=True):
                n = int(counts.get(what, 0)) if what != "only in one run" else int(counts.get("only in A", 0) + counts.get("only in B", 0))
                col.metric(f"Verdicts {what}" if what != "changed" else "Verdicts changed (no order)", n)
        link = RECEIPT_GATE_HOOK(ra, rb)
        if link:
            st.markdown(link)
        top = largest_changes(deltas)
        if len(top):
            st.markdown("**The 5 largest changes** · B − A")
            st.dataframe(top, hide_index=True, key="view_ru_cmp_top")
        if changes is not None:
            with st.expander(f"All verdict changes ({len(changes)} row(s))"):
                st.dataframe(changes.assign(change=change_directions(changes)), hide_index=True, key="view_ru_cmp_verdicts")
        if not deltas:
            st.info("The two runs share no table with numeric columns to compare.")
        for name, df in deltas.items():
            with st.expander(f"{md_escape(name)} · B − A ({len(df):,} row(s))"):
                st.dataframe(df, hide_index=True, key=f"view_ru_cmp_{name}")
        left, right = st.columns(2)
        with left:
            st.markdown("**Run A**")
            show_record(ra, key="cmp_a")
        with right:
            st.markdown("**Run B**")
            show_record(rb, key="cmp_b")


def import_section() -> None:
    """Upload a JSON bundle and restore its run (validated; clear errors)."""
    upload = st.file_uploader("Run bundle (.json)", type=["json"], key="up_ru_bundle")
    if upload is not None and st.button("Import run", key="act_ru_import", disabled=registry().read_only,
                                        help="The registry is open read-only." if registry().read_only else None):
        with guarded(f"importing {upload.name}"):
            run_id = import_bundle(registry(), upload.getvalue(), name=upload.name)
            _clear_caches()
            st.success(f"Imported run {code(run_id)}.", icon=":material/check_circle:")


def _parquet_clash(record) -> str | None:
    """Why the Parquet zip cannot be built (two tables would share a file name), or ``None``."""
    try:
        parquet_file_names(record.tables)
    except AuditInputError as exc:
        return exc.message
    return None
