"""JSON bundles restore a run exactly; Parquet exports; run comparison (deltas, verdict changes)."""
from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs.bundle import export_bundle, import_bundle, read_bundle
from audit_core.runs.export import parquet_zip
from audit_core.runs.compare import compare_runs_tables, table_deltas, verdict_changes
from audit_core.runs.registry import RunRegistry
from tests.runs_data import save_custom_run, save_model_run

FIELDS = ("run_id", "created_at", "updated_at", "audit_kind", "status", "dataset_name", "dataset_fingerprint",
          "grouping_hash", "model_spec", "config", "manifest", "error")


def _assert_same_run(a, b) -> None:
    for f in FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    assert list(a.tables) == list(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True)
    assert dict(a.artifacts) == dict(b.artifacts)


@pytest.fixture
def two_registries(tmp_path: Path) -> tuple[RunRegistry, RunRegistry]:
    return RunRegistry(tmp_path / "a.sqlite3"), RunRegistry(tmp_path / "b.sqlite3")


def test_bundle_round_trip_restores_the_run_exactly(two_registries) -> None:
    src, dst = two_registries
    ids = [save_custom_run(src), save_model_run(src)]
    for run_id in ids:
        original = src.load(run_id)
        data = export_bundle(original)
        assert export_bundle(original) == data  # deterministic bytes
        assert import_bundle(dst, data, name="b.json") == run_id
        restored = dst.load(run_id)
        _assert_same_run(original, restored)
        assert export_bundle(restored) == data  # and again after the round trip
    failed = src.create_run(audit_kind="model", dataset_name="d", dataset_fingerprint="e" * 64,
                            grouping_hash=None, model_spec={}, config={})
    src.fail_run(failed, error="boom")
    import_bundle(dst, export_bundle(src.load(failed)))
    _assert_same_run(src.load(failed), dst.load(failed))


def _tamper(data: bytes, edit) -> bytes:
    obj = json.loads(data)
    edit(obj)
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    ("edit", "code", "text"),
    [
        (lambda o: None, "RUN_EXISTS", "is already in the registry"),
        (lambda o: o.update(format="zip"), "BUNDLE_WRONG_FORMAT", "is not a reliability-audit run bundle (its 'format' is 'zip'"),
        (lambda o: o.update(format_version=99), "BUNDLE_NEWER_VERSION", "has format version 99; this version of the app reads up to version 1"),
        (lambda o: o["run"].pop("config"), "BUNDLE_MISSING_FIELD", "is incomplete: run.config is missing or has the wrong type."),
        (lambda o: o["tables"][0].update(data=base64.b64encode(b"junk").decode()), "BUNDLE_CHECKSUM", "the SHA-256 of table 'verdicts' does not match"),
        (lambda o: o["tables"][0].update(data="***"), "BUNDLE_BAD_ENTRY", "has a damaged table 'verdicts': not base64"),
    ],
    ids=["exists", "format", "version", "field", "checksum", "base64"],
)
def test_bad_bundles_are_refused_with_clear_errors(two_registries, edit, code, text) -> None:
    src, _ = two_registries
    data = _tamper(export_bundle(src.load(save_custom_run(src))), edit)
    with pytest.raises(AuditInputError) as info:
        import_bundle(src, data, name="run.json")
    assert info.value.code == code and text in info.value.message
    assert len(src.list_runs()) == 1  # nothing written


def test_not_json_is_refused() -> None:
    with pytest.raises(AuditInputError) as info:
        read_bundle(b"\x89PNG", name="pic.png")
    assert info.value.code == "BUNDLE_NOT_JSON" and "The bundle pic.png is not a JSON file" in info.value.message


def test_parquet_zip_holds_every_table(two_registries) -> None:
    src, _ = two_registries
    record = src.load(save_custom_run(src))
    data = parquet_zip(record)
    assert parquet_zip(record) == data
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.namelist() == ["verdicts.parquet", "mixed.parquet"]
        pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(zf.read("mixed.parquet"))), record.tables["mixed"])


def test_table_deltas_join_on_key_columns() -> None:
    a = pd.DataFrame({"split": ["train", "test"], "metric": ["auroc", "auroc"], "value": [0.9, 0.8]})
    b = pd.DataFrame({"split": ["test", "train", "test"], "metric": ["auroc", "auroc", "brier"], "value": [0.85, 0.9, 0.1]})
    d = table_deltas(a, b).sort_values(["split", "metric"]).reset_index(drop=True)
    assert list(d.columns) == ["split", "metric", "value_a", "value_b", "value_delta"]
    assert d["value_delta"].round(10).tolist()[:1] == [0.05]
    assert d.loc[d["metric"] == "brier", "value_a"].isna().all()  # only in B
    assert table_deltas(a[["split"]], b[["split"]]) is None


def test_verdict_changes_and_compare(two_registries) -> None:
    src, _ = two_registries
    ra = src.load(save_custom_run(src, verdicts=("pass", "fail", "pass")))
    rb = src.load(save_custom_run(src, verdicts=("pass", "pass", "fail")))
    out = compare_runs_tables(ra.tables, rb.tables)
    changes = out["verdict changes"]
    assert changes[["check", "verdict_a", "verdict_b"]].values.tolist() == [
        ["abstention", "pass", "fail"],  # outer join: rows sorted by their keys
        ["calibration", "fail", "pass"],
    ]
    assert "mixed" in out and "verdicts" in out
    assert verdict_changes(ra.tables["verdicts"], ra.tables["verdicts"]).empty


def test_parquet_export_keeps_tables_whose_names_clean_to_the_same_file(two_registries, tmp_path) -> None:
    """``a/b`` and ``a_b`` (and ``A``/``a``, equal on case-blind disks) each get their own file; none is lost."""
    import dataclasses
    import hashlib
    import types

    from audit_core.runs.export import parquet_file_names, write_parquet_tables

    src, _ = two_registries
    names = ["a_b", "a/b", "A", "a", "../x"]
    tables = {n: pd.DataFrame({"v": [i, i + 1]}) for i, n in enumerate(names)}
    record = dataclasses.replace(src.load(save_custom_run(src)), tables=types.MappingProxyType(tables))

    def h(name: str) -> str:
        return hashlib.sha256(name.encode()).hexdigest()[:8]

    expected = {"a_b": "a_b.parquet", "a/b": f"a_b-{h('a/b')}.parquet", "A": f"A-{h('A')}.parquet",
                "a": f"a-{h('a')}.parquet", "../x": f".._x-{h('../x')}.parquet"}
    assert parquet_file_names(names) == expected
    assert parquet_file_names(reversed(names)) == expected  # a name's file never depends on the order
    with zipfile.ZipFile(io.BytesIO(parquet_zip(record))) as zf:
        assert zf.namelist() == list(expected.values())
        for name, file in expected.items():
            pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(zf.read(file))), tables[name])
    paths = write_parquet_tables(record, tmp_path / "t")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == sorted(expected.values())
    for name, p in zip(names, paths):
        pd.testing.assert_frame_equal(pd.read_parquet(p), tables[name])


def test_parquet_export_refuses_a_clash_it_cannot_resolve(tmp_path) -> None:
    """A table named exactly like another's hashed file name is refused before anything is written."""
    import hashlib

    from audit_core.runs.export import parquet_file_names

    taken = f"a_b-{hashlib.sha256(b'a/b').hexdigest()[:8]}"
    with pytest.raises(AuditInputError) as info:
        parquet_file_names(["a/b", taken])
    assert info.value.code == "EXPORT_NAME_CLASH"
    assert info.value.message.startswith(f"Cannot export the tables 'a/b' and '{taken}' of this run: both would be "
                                         f"written as '{taken}.parquet'.")
