"""Widget sections of the Data & groups page.

Each function renders one section, reads and writes session state under
:class:`components.state.Keys`, and calls the library for the work. Errors
go through :func:`components.feedback.guarded`, so a refusal never clears
what the user entered.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from audit_core.data.baseline import BASELINE_KINDS, BaselineKind
from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.groups import GroupRule, apply_group_rules, parse_group_csv
from audit_core.data.intake import LoadedTable, user_read_options
from audit_core.data.roles import ROLES, propose_roles
from audit_core.data.samples import SAMPLES
from audit_core.data.targets import target_from_dict
from audit_core.errors import AuditInputError, fail, register_messages
from audit_core.models.importing import import_model
from audit_core.models.refusals import ACCEPTED_FORMATS
from audit_core.models.training import Workspace, attach_model, train_workspace
from audit_core.models.zoo import ZOO, ModelSpec
from audit_core.runs.save import save_workspace
from components import jobs
from components.feedback import code, guarded, md_escape, stale_notice
from components.state import (
    PERSIST, WORKSPACE_SLOT, Keys, cached_sheets, cached_upload, cached_uploads, current_provenance, registry,
    sample_table, session, workspace_key,
)
from components.widgets.adoption import NONE, adopt_table, replace_columns_table, seed_domain_values

__all__ = [
    "source_section",
    "read_report_section",
    "columns_section",
    "targets_section",
    "special_columns_section",
    "current_config",
    "groups_tools_section",
    "model_section",
    "workspace_section",
]

register_messages({
    "GROUP_RULE_SYNTAX": "Cannot read the rule {rule!r}. Write 'prefix: PATTERN -> GROUP' or 'regex: PATTERN -> GROUP'.",
})

# The upload that the accepted missing codes (``dg_missing_codes``) belong to.
_CODES_FOR = workspace_key("missing_codes_for")
# The (column, code) pairs the reader applied or proposes for the current table.
_CODE_PAIRS = workspace_key("missing_code_pairs")
_FIRST_WITH_DATA = "(first sheet with data)"
TRAIN_JOB = "train"
# The save refusal of the latest training job ({"message": text} once refused), read when its model is adopted.
_SAVE_REFUSAL = workspace_key("train_save_refusal")
_DELIMITERS = {"detect": None, ",": ",", ";": ";", "tab": "\t", "|": "|", "whitespace": " "}
_HEADERS = {"detect": "auto", "is the header": "first_row", "is data": "none"}
_DECIMALS = {"detect": "auto", ". (point)": ".", ", (comma)": ","}


def _upload_id(uploads: list) -> str:
    import hashlib

    h = hashlib.sha256()
    for u in uploads:
        h.update(u.name.encode() + b"\0" + hashlib.sha256(u.getvalue()).digest())
    return h.hexdigest()


def _code_label(column: str, code: str) -> str:
    return f"{code!r} in {column}"


def _accepted_codes(options: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    chosen = set(st.session_state.get("dg_missing_codes") or [])
    return tuple(pair for pair in options if _code_label(*pair) in chosen)


def _read_options_widgets(uploads: list) -> dict[str, Any]:
    with st.expander("Read options"):
        c1, c2, c3, c4 = st.columns(4)
        delim = c1.selectbox("Delimiter", list(_DELIMITERS), key="dg_delim", persist_state=PERSIST)
        enc = c2.selectbox("Encoding", ["detect", "utf-8", "latin-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be"],
                           key="dg_enc", persist_state=PERSIST)
        header = c3.selectbox("First row", list(_HEADERS), key="dg_header", persist_state=PERSIST)
        decimal = c4.selectbox("Decimal mark", list(_DECIMALS), key="dg_decimal", persist_state=PERSIST)
        names = st.text_input("Column names for a file without a header (comma-separated; blank: col_1, col_2, …)",
                              key="dg_col_names", persist_state=PERSIST)
        na_codes = st.text_input("Extra missing codes, all columns (comma-separated)", key="dg_na_codes", persist_state=PERSIST)
        sheet: str | int | None = None
        if len(uploads) == 1 and uploads[0].getvalue()[:2] == b"PK":
            with guarded(f"listing the sheets of {uploads[0].name}"):
                sheets = cached_sheets(uploads[0].getvalue(), uploads[0].name, user_read_options())
                labels = [_FIRST_WITH_DATA] + [s.name for s in sheets]
                if st.session_state.get("dg_sheet") not in labels:
                    st.session_state["dg_sheet"] = _FIRST_WITH_DATA
                pick = st.selectbox("Sheet", labels, key="dg_sheet", persist_state=PERSIST,
                                    format_func=lambda n: n if n == _FIRST_WITH_DATA else
                                    next(f"{s.name} ({s.n_rows:,} × {s.n_columns:,})" for s in sheets if s.name == n))
                sheet = None if pick == _FIRST_WITH_DATA else pick
        drop_missing = st.checkbox("Drop all-missing columns", key="dg_drop_missing", persist_state=PERSIST)
        inf_missing = st.checkbox("Treat inf as missing", key="dg_inf_missing", persist_state=PERSIST)
    return dict(
        delimiter=_DELIMITERS[delim],
        encoding=None if enc == "detect" else enc,
        header=_HEADERS[header],
        decimal=_DECIMALS[decimal],
        column_names=(names or "").split(","),
        na_values=(na_codes or "").split(","),
        sheet=sheet,
        drop_all_missing=drop_missing,
        inf_as_missing=inf_missing,
    )


def source_section() -> LoadedTable | None:
    """Pick a bundled sample or upload files; returns the current table."""
    st.subheader("1 · Data")
    mode = st.radio("Source", ["Bundled sample", "Upload a file"], horizontal=True, key="dg_source_mode", persist_state=PERSIST)
    if mode == "Bundled sample":
        names = list(SAMPLES)
        name = st.selectbox(
            "Sample", names, key="dg_sample", persist_state=PERSIST, format_func=lambda n: SAMPLES[n].title
        )
        st.caption(SAMPLES[name].description)
        with guarded("loading the sample"):
            adopt_table(sample_table(name), f"sample:{name}", SAMPLES[name])
    else:
        # Any extension: the library recognises text by content and refuses
        # other files with a visible message (the uploader's own type filter
        # would refuse adult.data with a message shown only on hover).
        uploads = st.file_uploader(
            "CSV, Parquet or Excel (.xlsx) — or any delimited text file (.data, .asc, .txt, gzip…); "
            "several text files with the same columns are stacked",
            accept_multiple_files=True,
            key="up_table",
        ) or []
        read = _read_options_widgets(uploads)
        if uploads:
            upload_id = _upload_id(uploads)
            if st.session_state.get(_CODES_FOR) != upload_id:  # codes accepted for another file
                st.session_state["dg_missing_codes"] = []
                st.session_state[_CODES_FOR] = upload_id  # last, as in adopt_table
            label = uploads[0].name + (f" and {len(uploads) - 1} more" if len(uploads) > 1 else "")
            with guarded(f"reading {label}"):
                pending = st.session_state.get(_CODE_PAIRS) or ()
                options = user_read_options(missing_codes=_accepted_codes(list(pending)), **read)
                files = tuple((u.getvalue(), u.name) for u in uploads)
                loaded = cached_upload(*files[0], options) if len(files) == 1 else cached_uploads(files, options)
                adopt_table(loaded, f"upload:{upload_id}", None)
                if loaded.dropped_columns:
                    st.info("Dropped all-missing columns: " + ", ".join(map(code, loaded.dropped_columns)))
    table = st.session_state.get(Keys.TABLE)
    if table is not None:
        f = table.frame
        st.caption(f"**{md_escape(table.name)}** · {f.shape[0]:,} rows × {f.shape[1]:,} columns")
        read_report_section(table)
        st.dataframe(f.head(200), height=220, key="view_preview")
    return table


def _accept_all_codes(labels: list[str]) -> None:
    st.session_state["dg_missing_codes"] = list(labels)


def read_report_section(table: LoadedTable) -> None:
    """What the reader decided, in plain words, and the missing codes it proposes (accepted in one click)."""
    report = table.report
    lines = report.lines()
    if lines:
        st.markdown("\n".join(f"- {md_escape(line)}" for line in lines))
    for _code, message in report.warnings:
        st.warning(md_escape(message), icon=":material/warning:")
    applied = [(c, code) for c, code, _ in report.missing_applied if code != ""]
    extra = set(table_na_values())
    applied = [pair for pair in applied if pair[1] not in extra]
    proposed = [p.key for p in report.missing_proposals]
    pairs = list(dict.fromkeys(applied + proposed))
    st.session_state[_CODE_PAIRS] = tuple(pairs)
    if not pairs:
        return
    if report.missing_proposals:
        st.dataframe(
            pd.DataFrame([{"column": p.column, "code": p.code, "cells": p.count,
                           "if accepted": "the column becomes numeric" if p.makes_numeric else
                           "a text value becomes missing (check it is not a real category)"}
                          for p in report.missing_proposals]),
            hide_index=True, key="view_missing_proposals",
        )
    labels = [_code_label(*pair) for pair in pairs]
    c1, c2 = st.columns([4, 1])
    c1.multiselect("Missing codes applied (cells holding them become missing)", labels, key="dg_missing_codes",
                   persist_state=PERSIST)
    c2.button("Accept all proposed", key="act_accept_codes", on_click=_accept_all_codes, args=(labels,),
              disabled=not report.missing_proposals)


def table_na_values() -> tuple[str, ...]:
    """The extra missing codes typed for all columns."""
    return tuple(c.strip() for c in (st.session_state.get("dg_na_codes") or "").split(",") if c.strip())


def columns_section() -> pd.DataFrame:
    """Edit column roles and evidence groups in one table; returns the edited table."""
    st.subheader("2 · Columns: roles and evidence groups")
    st.caption(
        "Roles are inferred; change any of them. Each feature column belongs to one evidence group "
        "(by default its own). Columns read by a target definition, and the key, weight, domain and "
        "group columns, are never features."
    )
    base = st.session_state[Keys.COLUMNS]
    editor_key = f"ed_columns_{st.session_state.get(Keys.EDITOR_VERSION, 0)}"
    edited = st.data_editor(
        base,
        key=editor_key,
        on_change=_fold_column_edits,
        args=(editor_key,),
        hide_index=True,
        disabled=["column", "dtype", "missing_share", "n_unique"],
        column_config={
            "role": st.column_config.SelectboxColumn("role", options=list(ROLES), required=True),
            "group": st.column_config.TextColumn("evidence group", required=True),
            "missing_share": st.column_config.NumberColumn("missing", format="percent"),
        },
        height=min(38 * (len(base) + 1), 420),
    )
    _role_proposals(edited)
    return edited


def _role_proposals(edited: pd.DataFrame) -> None:
    """Roles the library proposes (integer codes as categorical, high-cardinality columns as identifiers)."""
    table: LoadedTable | None = st.session_state.get(Keys.TABLE)
    if table is None:
        return
    roles = dict(zip(edited["column"], edited["role"], strict=True))
    proposals = propose_roles(table.frame.loc[:, [c for c in edited["column"] if c in table.frame.columns]], roles)
    if not proposals:
        return
    with st.expander(f"Proposed roles ({len(proposals)})", expanded=True):
        st.dataframe(
            pd.DataFrame([{"column": p.column, "now": roles[p.column], "proposed": p.role, "why": p.reason}
                          for p in proposals.values()]),
            hide_index=True, key="view_role_proposals",
        )
        if st.button("Use the proposed roles", key="act_accept_roles"):
            replace_columns_table(edited.assign(role=[proposals[c].role if c in proposals else r
                                                       for c, r in zip(edited["column"], edited["role"], strict=True)]))
            st.rerun()


def _fold_column_edits(editor_key: str) -> None:
    """``on_change`` of the column editor: fold its edits into :attr:`Keys.COLUMNS`.

    A data editor cannot persist its state across pages, and the other pages
    read the declaration from ``Keys.COLUMNS``; so every edit is applied to
    that table at once and the editor restarts from it (a new key).
    """
    changes = st.session_state.get(editor_key) or {}
    base = st.session_state[Keys.COLUMNS].copy()
    for row, values in (changes.get("edited_rows") or {}).items():
        for col, value in values.items():
            if col in base.columns:
                base.iloc[int(row), base.columns.get_loc(col)] = value
    replace_columns_table(base)


def groups_tools_section(edited: pd.DataFrame) -> None:
    """Assign groups by prefix/regex rules or an uploaded ``column,group`` CSV.

    The expander keeps its state on the server (a key and ``on_change="rerun"``), so one the user opened stays
    open through the reruns of an upload or an Apply, even when the browser redraws it.
    """
    with st.expander("Assign groups by rules or CSV", key="view_dg_group_tools", on_change="rerun"):
        st.caption("One rule per line: `prefix: bureau_ -> bureau` or `regex: ^(age|income) -> applicant`.")
        text = st.text_area("Rules", key="dg_group_rules", persist_state=PERSIST, height=100)
        if st.button("Apply rules", key="act_apply_rules"):
            with guarded("applying group rules"):
                rules = [_parse_rule(line) for line in text.splitlines() if line.strip()]
                mapping = apply_group_rules(list(edited["column"]), rules)
                replace_columns_table(edited.assign(group=[mapping.get(c, g)
                                                           for c, g in zip(edited["column"], edited["group"], strict=True)]))
                st.rerun()
        csv_file = st.file_uploader("Upload a column,group CSV", type=["csv"], key="up_group_csv")
        if csv_file is not None and st.button("Apply CSV", key="act_apply_csv"):
            with guarded("reading the group CSV"):
                mapping = parse_group_csv(csv_file.getvalue(), list(edited["column"]))
                replace_columns_table(edited.assign(group=[mapping.get(c, g)
                                                           for c, g in zip(edited["column"], edited["group"], strict=True)]))
                st.rerun()
        if st.button("Reset to one group per column", key="act_reset_groups"):
            replace_columns_table(edited.assign(group=edited["column"]))
            st.rerun()


def _parse_rule(line: str) -> GroupRule:
    kind, _, rest = line.partition(":")
    pattern, arrow, group = rest.rpartition("->")
    kind = kind.strip().lower()
    if not arrow or kind not in {"prefix", "regex"} or not pattern.strip() or not group.strip():
        raise fail("GROUP_RULE_SYNTAX", rule=line.strip())
    return GroupRule(pattern=pattern.strip(), group=group.strip(), kind=kind)  # type: ignore[arg-type]


def _target_label(t: dict[str, Any]) -> str:
    if t["kind"] == "class":
        pos = t.get("positive")
        return f"{t['column']} == {pos!r}" if pos is not None else f"{t['column']} (multi-class)"
    if t["kind"] == "threshold":
        return f"{t['column']} {t.get('op', '>=')} {t['threshold']}"
    return str(t["expression"])


def targets_section(frame: pd.DataFrame) -> None:
    """List, add and remove named target definitions; pick the primary one."""
    st.subheader("3 · Target definitions")
    targets: list[dict] = st.session_state[Keys.TARGETS]
    if targets:
        st.dataframe(
            pd.DataFrame([{"name": t["name"], "kind": t["kind"], "definition": _target_label(t)} for t in targets]),
            hide_index=True,
            key="view_targets",
        )
        names = [t["name"] for t in targets]
        st.selectbox("Primary target (used for training)", names, key="dg_primary", persist_state=PERSIST)
        drop = st.selectbox("Remove a definition", [NONE] + names, key="dg_drop_target", persist_state=PERSIST)
        if drop != NONE and st.button("Remove", key="act_remove_target"):
            st.session_state[Keys.TARGETS] = [t for t in targets if t["name"] != drop]
            st.rerun()
    else:
        st.info("No target yet: add one below.")
    with st.expander("Add a target definition", expanded=not targets):
        kind = st.radio("Kind", ["class", "threshold", "expression"], horizontal=True, key="dg_new_kind", persist_state=PERSIST)
        name = st.text_input("Name", key="dg_new_name", persist_state=PERSIST)
        d: dict[str, Any] = {"kind": kind, "name": name.strip()}
        if kind == "class":
            col = st.selectbox("Class column", list(frame.columns), key="dg_new_col", persist_state=PERSIST)
            values = [NONE + " (multi-class)"] + [str(v) for v in pd.unique(frame[col].dropna())[:50]]
            pos = st.selectbox("Positive class", values, key="dg_new_pos", persist_state=PERSIST)
            raw = {str(v): v for v in pd.unique(frame[col].dropna())[:50]}
            d.update(column=col, positive=None if pos.startswith(NONE) else _plain(raw[pos]))
        elif kind == "threshold":
            numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c].dtype)]
            col = st.selectbox("Numeric column", numeric, key="dg_new_tcol", persist_state=PERSIST)
            op = st.selectbox("Operator", [">=", ">"], key="dg_new_op", persist_state=PERSIST)
            st.session_state.setdefault("dg_new_thr", 0.0)
            thr = st.number_input("Threshold", key="dg_new_thr", persist_state=PERSIST)
            d.update(column=col, op=op, threshold=float(thr))
        else:
            d["expression"] = st.text_input("Expression (e.g. `income_real >= 50000 and age < 65`)", key="dg_new_expr",
                                            persist_state=PERSIST)
        if st.button("Add definition", key="act_add_target"):
            with guarded("adding the target definition"):
                definition = target_from_dict(d)
                definition.apply(frame)  # refuse bad definitions now, naming the column
                if any(t["name"] == definition.name for t in targets):
                    raise fail("TARGET_DUPLICATE_NAME", name=definition.name)
                st.session_state[Keys.TARGETS] = targets + [definition.to_dict()]
                st.rerun()


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def special_columns_section(frame: pd.DataFrame) -> None:
    """Key, weight, domain and group columns, eligibility filter, preprocessing options."""
    st.subheader("4 · Records: key, weights, domains, eligibility")
    cols = [NONE] + list(frame.columns)
    c1, c2, c3, c4 = st.columns(4)
    c1.selectbox("Record key", cols, key="dg_key", persist_state=PERSIST)
    c2.selectbox("Weight", cols, key="dg_weight", persist_state=PERSIST)
    c3.selectbox("Domain", cols, key="dg_domain", persist_state=PERSIST)
    c4.selectbox("Group (person, site…)", cols, key="dg_group_col", persist_state=PERSIST)
    domain = st.session_state.get("dg_domain", NONE)
    if domain != NONE:
        values = seed_domain_values(frame, domain, st.session_state.get(Keys.SAMPLE))
        d1, d2 = st.columns(2)
        d1.selectbox("Source domain (training)", values, key="dg_source_value", persist_state=PERSIST)
        d2.selectbox("Target domain", values, key="dg_target_value", persist_state=PERSIST)
    st.text_input("Eligibility filter (expression; blank keeps all rows)", key="dg_eligibility", persist_state=PERSIST)
    st.checkbox("Add missingness indicators", key="dg_missing_ind", persist_state=PERSIST)


def _domain_value(frame: pd.DataFrame, column: str | None, text: str | None) -> Any:
    if column is None or text is None:
        return None
    for v in pd.unique(frame[column].dropna()):
        if str(v) == text:
            return _plain(v)
    return None


def current_config(table: LoadedTable, edited: pd.DataFrame, *,
                   state: MutableMapping | None = None) -> tuple[DatasetConfig, dict[str, str]]:
    """The declaration as it stands in the widgets (or in ``state``, a workspace kept aside), and the raw
    column → group map."""
    ss = session(state)

    def opt(key: str) -> str | None:
        v = ss.get(key, NONE)
        return None if v in (None, NONE) else v

    domain = opt("dg_domain")
    config = DatasetConfig(
        name=table.name,
        targets=tuple(ss.get(Keys.TARGETS, [])),
        primary_target=opt("dg_primary"),
        roles=dict(zip(edited["column"], edited["role"], strict=True)),
        eligibility=(ss.get("dg_eligibility") or "").strip() or None,
        weight_column=opt("dg_weight"),
        key_column=opt("dg_key"),
        domain_column=domain,
        group_column=opt("dg_group_col"),
        source_domain=_domain_value(table.frame, domain, ss.get("dg_source_value")),
        target_domain=_domain_value(table.frame, domain, ss.get("dg_target_value")),
        missing_indicators=bool(ss.get("dg_missing_ind", False)),
    )
    groups = {c: str(g) if g is not None else "" for c, g in zip(edited["column"], edited["group"], strict=True)}
    return config, groups


def model_section(table: LoadedTable, config: DatasetConfig, groups: dict[str, str]) -> None:
    """Choose a baseline, then train a zoo model or import one; saves a run."""
    st.subheader("5 · Baseline and model")
    c1, c2, c3 = st.columns([2, 2, 1])
    baseline = c1.selectbox("Baseline vector", list(BASELINE_KINDS), key="dg_baseline", persist_state=PERSIST)
    tab_train, tab_import = st.tabs(["Train a model", "Import a model"])
    with tab_train:
        kind = st.selectbox("Model", list(ZOO), format_func=lambda k: ZOO[k][0], key="dg_model_kind", persist_state=PERSIST)
        st.session_state.setdefault("dg_seed", 0)
        seed = int(st.number_input("Seed", min_value=0, step=1, key="dg_seed", persist_state=PERSIST))
        job = jobs.current(TRAIN_JOB)
        running = job is not None and job.running
        if st.button("Train model", type="primary", key="act_train", disabled=running):
            job = _start_training(table, config, groups, spec=ModelSpec(kind=kind, seed=seed), baseline=baseline)
        _follow_training(job)
    with tab_import:
        st.caption(md_escape(f"Accepted: {ACCEPTED_FORMATS}. Pickle, joblib and MLflow files are never opened: "
                             "upload one to see how to convert it."))
        # Any file type: a refused format gets a message that says how to convert it, not a greyed-out file chooser.
        upload = st.file_uploader("Model file", key="up_model")
        if upload is not None and st.button("Import model", key="act_import"):
            with guarded(f"importing {upload.name}"), st.spinner("Importing…"):
                dataset = build_dataset(table.frame, config)
                model = import_model(upload.getvalue(), name=upload.name, table=dataset.frame)
                ws = attach_model(dataset, model, raw_groups=groups, baseline_kind=baseline)
                _store(ws)


def _constant(ws: Workspace) -> bool:
    """Whether the model's held-out predictions are (nearly) constant (``TRAIN_CONSTANT_PREDICTIONS``)."""
    return any(c == "TRAIN_CONSTANT_PREDICTIONS" for c, _ in ws.warnings)


def _start_training(table: LoadedTable, config: DatasetConfig, groups: dict[str, str], *, spec: ModelSpec,
                    baseline: BaselineKind) -> jobs.Job:
    """Train (and save) the model as a :class:`~components.jobs.Job`: a rerun that interrupts the page (a late
    widget event, a reconnect under load, a click elsewhere) no longer drops the training. A refused save keeps the
    model: the worker returns it with no run id and the refusal in :data:`_SAVE_REFUSAL`."""
    reg, frame = registry(), table.frame
    refusal: dict[str, str] = {}

    def work(job: jobs.Job) -> tuple[Workspace, str | None]:
        dataset = build_dataset(frame, config)
        ws = train_workspace(dataset, spec=spec, raw_groups=groups, baseline_kind=baseline, progress=job.progress)
        try:
            return ws, save_workspace(reg, ws)
        except AuditInputError as err:
            refusal["message"] = err.message
            return ws, None

    st.session_state[_SAVE_REFUSAL] = refusal
    return jobs.start(TRAIN_JOB, "Model training", work, provenance=current_provenance())


def _follow_training(job: jobs.Job | None) -> None:
    """Follow a training job; take a finished model into :data:`WORKSPACE_SLOT` (once) and announce it."""
    if not jobs.follow_and_adopt(job, WORKSPACE_SLOT, stopped="Training stopped; no model was kept."):
        return
    _announce(WORKSPACE_SLOT.value, WORKSPACE_SLOT.run_id, (st.session_state.get(_SAVE_REFUSAL) or {}).get("message"))


def _store(ws: Workspace) -> None:
    """Keep an imported model in the session first (tied to the current inputs), then save it: a refused save (full
    disk, read-only registry) keeps it."""
    provenance = current_provenance()
    WORKSPACE_SLOT.put(ws, provenance)
    try:
        run_id = save_workspace(registry(), ws)
    except AuditInputError as err:  # shown by the caller's guarded block too; the model stays usable
        _announce(ws, None, err.message, show=False)
        raise
    WORKSPACE_SLOT.put(ws, provenance, run_id=run_id)
    _announce(ws, run_id, None)


def _announce(ws: Workspace, run_id: str | None, refused: str | None, *, show: bool = True) -> None:
    """The message the workspace section shows: ready (or constant), saved as which run, or kept but not saved."""
    auc = ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0]
    head = "Model trained, but its predictions are (nearly) constant" if _constant(ws) else "Model ready"
    ready = f"{head}: {ws.model.spec.get('kind')} · held-out AUROC {auc:.3f} · {ws.grouping.n_groups} evidence groups"
    if refused is None:
        st.session_state[Keys.MESSAGE] = f"{ready} · saved as run {run_id}."
        return
    st.session_state[Keys.MESSAGE] = f"{ready} · kept in this session but not saved: {refused}"
    if show:
        st.error(md_escape(refused), icon=":material/error:")


def workspace_section(groups: dict[str, str]) -> Workspace | None:
    """Show the current model: message, held-out metrics and the raw-origin table."""
    ws: Workspace | None = WORKSPACE_SLOT.value
    if ws is None:
        return None
    changed = WORKSPACE_SLOT.changed(current_provenance())
    if changed:
        stale_notice("model", WORKSPACE_SLOT.describe(changed))
    baseline = st.session_state.get("dg_baseline", ws.baseline_kind)
    wanted = {c: g for c, g in groups.items() if c in set(ws.model.origins["raw_column"])}
    if not changed and (wanted != ws.grouping.raw_map() or baseline != ws.baseline_kind):
        with guarded("regrouping"):
            regrouped = ws.with_grouping(wanted, baseline_kind=baseline)
            WORKSPACE_SLOT.put(regrouped, WORKSPACE_SLOT.provenance or current_provenance(),
                               run_id=WORKSPACE_SLOT.run_id)
            ws = regrouped
    if st.session_state.get(Keys.MESSAGE) and not changed:
        if _constant(ws):  # a model that learned nothing is not announced as ready
            st.warning(st.session_state[Keys.MESSAGE], icon=":material/warning:")
        else:
            st.success(st.session_state[Keys.MESSAGE], icon=":material/check_circle:")
    for _code, message in ws.warnings:
        st.warning(md_escape(message), icon=":material/warning:")
    st.dataframe(
        ws.metrics.pivot(index="metric", columns="split", values="value").reset_index(),
        hide_index=True,
        key="view_metrics",
    )
    st.markdown(f"**Raw-origin table** · grouping hash {code(ws.grouping.hash[:12])} · baseline {code(ws.baseline_kind)}")
    st.dataframe(ws.grouping.to_frame(), hide_index=True, height=300, key="view_origin_table")
    return ws
