"""Audit configuration files: parse, validate with exact messages, and load the data.

A config is a YAML (read with :func:`audit_core.safe_text.load_yaml`: ``yaml.safe_load``
with aliases, duplicate keys and nesting bounded) or JSON mapping::

    name: loan-default            # optional display name of the run(s)
    data:                         # exactly one of sample / path / paths
      sample: loan_synthetic
    dataset:                      # optional; defaults come from the sample
      targets: [{kind: class, name: default, column: defaulted, positive: "yes"}]
      domain_column: year
      source_domain: 2019
    model: {kind: logistic_regression, seed: 0, baseline: mean}
    audits:
      - kind: model
        bootstrap: 200

Every problem is a declared error (:mod:`audit_core.errors`) naming the key
path: an unknown key (with the closest allowed key suggested), a wrong type,
a missing key or file, a bad target definition or expression. Relative data
paths are resolved against ``base_dir`` (the CLI passes the working
directory: run it from the project root). See ``docs/cli.md``.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import difflib
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from audit_core.data.baseline import BASELINE_KINDS
from audit_core.data.dataset import AuditDataset, DatasetConfig, build_dataset
from audit_core.data.eligibility import EligibilityFilter
from audit_core.data.intake import LoadedTable, ReadOptions, check_table, read_table, user_read_options
from audit_core.data.intake.options import DECIMAL_CHOICES, HEADER_CHOICES
from audit_core.data.samples import SAMPLES, load_sample
from audit_core.data.targets import target_from_dict
from audit_core.errors import AuditInputError, fail, register_messages
from audit_core.limits import Limits
from audit_core.models.zoo import ZOO
from audit_core.safe_text import load_yaml, read_text_file

from .plugin import get_runner  # the audit registry validates each audit's options

__all__ = [
    "AuditConfig",
    "LoadedData",
    "check_keys",
    "data_read_options",
    "expect_type",
    "load_config",
    "load_data",
    "parse_config",
]

register_messages(
    {
        "CONFIG_NOT_FOUND": "The config file {path} does not exist.",
        "CONFIG_NOT_YAML": "The config file {path} is not valid YAML: {reason}",
        "CONFIG_NOT_MAPPING": "{where} must be a mapping of keys to values, got {got}.",
        "CONFIG_UNKNOWN_KEY": "Unknown key {key!r} in {where}.{hint} Allowed keys: {allowed}.",
        "CONFIG_MISSING_KEY": "Missing required key {key!r} in {where}.",
        "CONFIG_WRONG_TYPE": "{where} must be {expected}, got {got}.",
        "CONFIG_BAD_VALUE": "{where} must be {expected}, got {got!r}.",
        "CONFIG_DATA_SOURCE": (
            "{where} must name exactly one data source: 'sample', 'path' or 'paths' (found {found})."
        ),
        "CONFIG_MISSING_FILE": (
            "The data file {path} named in {where} does not exist "
            "(relative paths are resolved against {base})."
        ),
        "CONFIG_UNKNOWN_SAMPLE": "Unknown sample {name!r} in data.sample.{hint} Available samples: {names}.",
        "CONFIG_BAD_TARGET": "Bad target definition in {where}: {reason}",
        "CONFIG_NO_AUDITS": "The config declares no audits: add at least one entry under 'audits', e.g. - kind: model",
        "CONFIG_UNKNOWN_COLUMN": "{where} names the column {column}, which is not in the data.{hint} Columns: {columns}.",
    }
)

_TOP_KEYS = ("name", "data", "dataset", "model", "audits")
_DATA_KEYS = (
    "sample", "path", "paths", "part_column", "column_names", "na_values", "delimiter", "encoding", "header", "decimal",
    "sheet",
)
_DATASET_KEYS = (
    "targets",
    "primary_target",
    "roles",
    "eligibility",
    "weight_column",
    "key_column",
    "domain_column",
    "group_column",
    "strata_columns",
    "source_domain",
    "target_domain",
    "missing_indicators",
    "evidence_groups",
)
_MODEL_KEYS = ("kind", "seed", "params", "baseline", "test_size")
_TYPE_NAMES = {
    str: "a string",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "a mapping",
}


def _type_word(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({value!r})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def check_keys(
    section: Any, *, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Refuse a non-mapping, unknown keys (suggesting the closest) and missing keys.

    Parameters
    ----------
    section : object
        The parsed value that must be a mapping.
    where : str
        Its key path for messages, e.g. ``"model"`` or ``"audits[0]"``.
    allowed, required : tuple of str
        Allowed and required keys.

    Returns
    -------
    dict
        The section as a plain dict.

    Raises
    ------
    AuditInputError
        ``CONFIG_NOT_MAPPING``, ``CONFIG_UNKNOWN_KEY``, ``CONFIG_MISSING_KEY``.

    Examples
    --------
    >>> check_keys({"seed": 1}, where="model", allowed=("seed", "kind"))
    {'seed': 1}
    >>> check_keys({"sed": 1}, where="model", allowed=("seed", "kind"))
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: Unknown key 'sed' in model. Did you mean 'seed'? Allowed keys: kind, seed.
    """
    if not isinstance(section, Mapping):
        raise fail("CONFIG_NOT_MAPPING", where=where, got=_type_word(section))
    for key in section:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise fail("CONFIG_UNKNOWN_KEY", key=key, where=where, hint=hint, allowed=", ".join(sorted(allowed)))
    for key in required:
        if key not in section:
            raise fail("CONFIG_MISSING_KEY", key=key, where=where)
    return dict(section)


def expect_type(value: Any, types: type | tuple[type, ...], *, where: str, optional: bool = False) -> Any:
    """Return ``value`` if it has one of ``types`` (bool is never a number), else raise.

    Raises
    ------
    AuditInputError
        ``CONFIG_WRONG_TYPE`` such as "model.seed must be a whole number, got a string ('1')."
    """
    if optional and value is None:
        return value
    kinds = types if isinstance(types, tuple) else (types,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in kinds)
        raise fail("CONFIG_WRONG_TYPE", where=where, expected=expected, got=_type_word(value))
    return value


@dataclass(frozen=True, kw_only=True)
class AuditConfig:
    """A validated config.

    Attributes
    ----------
    name : str
    data : dict
        The ``data`` section as written.
    dataset : dict
        The ``dataset`` section as written (defaults are applied at load).
    model : dict
        ``kind``, ``seed``, ``params``, ``baseline``, ``test_size`` (defaults filled in).
    audits : tuple of dict
        One entry per audit: ``kind`` plus the runner's validated options.
    source : str
        Where the config came from (file path or ``"<dict>"``).
    sha256 : str
        SHA-256 of the config file bytes (or of the canonical JSON of a dict).
    """

    name: str
    data: Mapping[str, Any]
    dataset: Mapping[str, Any]
    model: Mapping[str, Any]
    audits: tuple[Mapping[str, Any], ...]
    source: str = "<dict>"
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-compatible dict (what a run stores)."""
        return {
            "name": self.name,
            "data": dict(self.data),
            "dataset": dict(self.dataset),
            "model": dict(self.model),
            "audits": [dict(a) for a in self.audits],
        }


def _validate_data(data: Any) -> dict[str, Any]:
    data = check_keys(data, where="data", allowed=_DATA_KEYS)
    found = [k for k in ("sample", "path", "paths") if k in data]
    if len(found) != 1:
        raise fail("CONFIG_DATA_SOURCE", where="data", found=", ".join(found) or "none")
    if "sample" in data:
        name = expect_type(data["sample"], str, where="data.sample")
        if name not in SAMPLES:
            close = difflib.get_close_matches(name, list(SAMPLES), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise fail("CONFIG_UNKNOWN_SAMPLE", name=name, hint=hint, names=", ".join(SAMPLES))
    if "path" in data:
        expect_type(data["path"], str, where="data.path")
    if "paths" in data:
        paths = expect_type(data["paths"], dict, where="data.paths")
        if not paths:
            raise fail("CONFIG_BAD_VALUE", where="data.paths", expected="a non-empty mapping of part label to file", got={})
        for label, p in paths.items():
            expect_type(p, str, where=f"data.paths.{label}")
        if "part_column" not in data:
            raise fail("CONFIG_MISSING_KEY", key="part_column", where="data (needed with 'paths')")
    for key in ("part_column", "delimiter", "encoding"):
        expect_type(data.get(key), str, where=f"data.{key}", optional=True)
    expect_type(data.get("sheet"), (str, int), where="data.sheet", optional=True)
    for key, choices in (("header", HEADER_CHOICES), ("decimal", DECIMAL_CHOICES)):
        if key in data and data[key] not in choices:
            raise fail("CONFIG_BAD_VALUE", where=f"data.{key}", expected="one of " + ", ".join(map(repr, choices)),
                       got=data[key])
    for key in ("column_names", "na_values"):
        values = expect_type(data.get(key), list, where=f"data.{key}", optional=True) or []
        for i, v in enumerate(values):
            expect_type(v, str, where=f"data.{key}[{i}]")
    return data


def _validate_dataset(section: Any) -> dict[str, Any]:
    section = check_keys(section or {}, where="dataset", allowed=_DATASET_KEYS)
    targets = expect_type(section.get("targets"), list, where="dataset.targets", optional=True)
    for i, t in enumerate(targets or []):
        where = f"dataset.targets[{i}]"
        if not isinstance(t, Mapping):
            raise fail("CONFIG_WRONG_TYPE", where=where, expected="a mapping", got=_type_word(t))
        try:
            target_from_dict(dict(t))  # parses expressions with our own grammar
        except AuditInputError as err:
            raise fail("CONFIG_BAD_TARGET", where=where, reason=err.message) from err
    for key in ("primary_target", "eligibility", "weight_column", "key_column", "domain_column", "group_column"):
        expect_type(section.get(key), str, where=f"dataset.{key}", optional=True)
    if section.get("eligibility"):
        try:
            EligibilityFilter(expression=section["eligibility"])
        except AuditInputError as err:
            raise fail("CONFIG_BAD_TARGET", where="dataset.eligibility", reason=err.message) from err
    for key in ("roles", "evidence_groups"):
        mapping = expect_type(section.get(key), dict, where=f"dataset.{key}", optional=True) or {}
        for col, v in mapping.items():
            expect_type(v, str, where=f"dataset.{key}.{col}")
    expect_type(section.get("strata_columns"), list, where="dataset.strata_columns", optional=True)
    expect_type(section.get("missing_indicators"), bool, where="dataset.missing_indicators", optional=True)
    return section


def _validate_model(section: Any) -> dict[str, Any]:
    section = check_keys(section, where="model", allowed=_MODEL_KEYS, required=("kind",))
    kind = expect_type(section["kind"], str, where="model.kind")
    if kind not in ZOO:
        close = difflib.get_close_matches(kind, list(ZOO), n=1)
        raise fail(
            "CONFIG_BAD_VALUE",
            where="model.kind",
            expected="one of " + ", ".join(ZOO) + (f" (did you mean {close[0]!r}?)" if close else ""),
            got=kind,
        )
    seed = expect_type(section.get("seed", 0), int, where="model.seed")
    params = expect_type(section.get("params", {}), dict, where="model.params")
    Limits.from_env().check_fields("model_params", params, where="model.params")
    baseline = expect_type(section.get("baseline", "mean"), str, where="model.baseline")
    if baseline not in BASELINE_KINDS:
        raise fail("CONFIG_BAD_VALUE", where="model.baseline", expected="one of " + ", ".join(BASELINE_KINDS), got=baseline)
    test_size = expect_type(section.get("test_size", 0.25), float, where="model.test_size")
    if not 0.05 <= float(test_size) <= 0.9:
        raise fail("CONFIG_BAD_VALUE", where="model.test_size", expected="a fraction between 0.05 and 0.9", got=test_size)
    return {"kind": kind, "seed": seed, "params": params, "baseline": baseline, "test_size": float(test_size)}


def _all_on_scores(audits: list) -> bool:
    """Whether every audit entry is a Transport run on scores (``kind: transport`` with a ``scores`` block)."""
    return bool(audits) and all(isinstance(a, Mapping) and a.get("kind") == "transport" and "scores" in a
                                for a in audits)


def parse_config(raw: Any, *, source: str = "<dict>", sha256: str = "") -> AuditConfig:
    """Validate a parsed config mapping.

    Parameters
    ----------
    raw : object
        What :func:`audit_core.safe_text.load_yaml` returned.
    source, sha256 : str
        Provenance recorded on the result.

    Returns
    -------
    AuditConfig

    Raises
    ------
    AuditInputError
        The first problem found, naming its key path.
    """
    top = check_keys(raw, where="the config", allowed=_TOP_KEYS, required=("data", "audits"))
    name = expect_type(top.get("name", Path(source).stem if source != "<dict>" else "audit"), str, where="name")
    data = _validate_data(top["data"])
    dataset = _validate_dataset(top.get("dataset"))
    audits_raw = expect_type(top["audits"], list, where="audits")
    if "model" not in top and not _all_on_scores(audits_raw):
        raise fail("CONFIG_MISSING_KEY", key="model", where="the config")
    # a config whose every audit runs on the table's scores fits no model: the default section is never used
    model = _validate_model(top.get("model", {"kind": "logistic_regression"}))
    if not audits_raw:
        raise fail("CONFIG_NO_AUDITS")
    audits = []
    for i, entry in enumerate(audits_raw):
        where = f"audits[{i}]"
        if not isinstance(entry, Mapping):
            raise fail("CONFIG_NOT_MAPPING", where=where, got=_type_word(entry))
        if "kind" not in entry:
            raise fail("CONFIG_MISSING_KEY", key="kind", where=where)
        kind = expect_type(entry["kind"], str, where=f"{where}.kind")
        runner = get_runner(kind, where=f"{where}.kind")
        options = runner.validate_config({k: v for k, v in entry.items() if k != "kind"}, where=where)
        audits.append({"kind": kind, **options})
    if not sha256:
        import json

        sha256 = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    return AuditConfig(
        name=name, data=data, dataset=dataset, model=model, audits=tuple(audits), source=source, sha256=sha256
    )


def load_config(path: str | Path) -> AuditConfig:
    """Read and validate a YAML (or JSON) config file with :func:`audit_core.safe_text.load_yaml`.

    Raises
    ------
    AuditInputError
        ``CONFIG_NOT_FOUND``, ``CONFIG_NOT_YAML``, the safe loader's
        ``TEXT_*`` / ``YAML_*`` refusals (not UTF-8, too large, too deep,
        duplicate keys, alias bombs) and every :func:`parse_config` error.
    """
    p = Path(path)
    if not p.is_file():
        raise fail("CONFIG_NOT_FOUND", path=p)
    text = read_text_file(p, what=f"The config file {p}")
    raw = load_yaml(text, what=f"The config file {p}",
                    syntax=lambda reason: fail("CONFIG_NOT_YAML", path=p, reason=reason))
    return parse_config(raw, source=str(p), sha256=hashlib.sha256(p.read_bytes()).hexdigest())


@dataclass(frozen=True, eq=False)
class LoadedData:
    """The checked dataset of a config, with input provenance.

    Attributes
    ----------
    dataset : AuditDataset
    inputs : list of dict
        One ``{"name", "sha256", "n_bytes"}`` per input file (no data).
    raw_groups : dict
        Raw column -> evidence group.
    """

    dataset: AuditDataset
    inputs: list[dict[str, Any]] = field(default_factory=list)
    raw_groups: dict[str, str] = field(default_factory=dict)


def data_read_options(data: Mapping[str, Any]) -> ReadOptions:
    """The read options of a config's ``data`` section, built as the app builds them from its Read options.

    Parameters
    ----------
    data : mapping
        A validated ``data`` section (:attr:`AuditConfig.data`).

    Returns
    -------
    ReadOptions
        See :func:`audit_core.data.intake.user_read_options`: what the section leaves out is decided from the file.
    """
    return user_read_options(
        delimiter=data.get("delimiter"),
        encoding=data.get("encoding"),
        header=data.get("header", "auto"),
        decimal=data.get("decimal", "auto"),
        column_names=data.get("column_names"),
        na_values=data.get("na_values"),
        sheet=data.get("sheet"),
    )


def _read_file(path: Path, data: Mapping[str, Any], where: str, base: Path) -> LoadedTable:
    if not path.is_file():
        raise fail("CONFIG_MISSING_FILE", path=path, where=where, base=base)
    return read_table(path.read_bytes(), name=path.name, options=data_read_options(data))


def load_data(config: AuditConfig, *, base_dir: str | Path) -> LoadedData:
    """Read the config's data and build its dataset (the config's checks that need the data).

    Parameters
    ----------
    config : AuditConfig
    base_dir : str or pathlib.Path
        Folder that relative data paths are resolved against.

    Returns
    -------
    LoadedData

    Raises
    ------
    AuditInputError
        ``CONFIG_MISSING_FILE`` and the intake / dataset / target errors.
    """
    base = Path(base_dir).resolve()
    data = config.data
    ds = dict(config.dataset)
    defaults: dict[str, Any] = {}
    groups: dict[str, str] = {}
    if "sample" in data:
        frame, info = load_sample(data["sample"])
        frame, _ = check_table(frame.copy(), name=data["sample"])
        name = info.path.name if info.path is not None else info.name
        inputs: list[dict[str, Any]] = [{"name": name, "sha256": _sha256_frame(frame), "n_bytes": None}]
        defaults = {
            "targets": [dict(t) for t in info.target_definitions],
            "key_column": info.key_column,
            "domain_column": info.domain_column,
            "source_domain": info.source_domain,
            "target_domain": info.target_domain,
            "group_column": info.group_column,
            "strata_columns": list(info.strata_columns),
            "roles": {c: "ignore" for c in info.exclude_columns if c in frame.columns},
        }
        groups = dict(info.evidence_groups)
    elif "path" in data:
        path = (base / data["path"]).resolve()
        table = _read_file(path, data, "data.path", base)
        frame, name = table.frame, table.name
        inputs = [{"name": table.name, "sha256": _sha256_bytes(path), "n_bytes": table.n_bytes}]
    else:
        parts: list[pd.DataFrame] = []
        inputs = []
        for label, rel in data["paths"].items():
            path = (base / rel).resolve()
            table = _read_file(path, data, f"data.paths.{label}", base)
            parts.append(table.frame.assign(**{data["part_column"]: str(label)}))
            inputs.append({"name": table.name, "sha256": _sha256_bytes(path), "n_bytes": table.n_bytes})
        frame = pd.concat(parts, ignore_index=True)
        name = config.name
    merged = {**defaults, **{k: v for k, v in ds.items() if k != "evidence_groups"}}
    merged["roles"] = {**defaults.get("roles", {}), **ds.get("roles", {})}
    groups.update(ds.get("evidence_groups") or {})
    cfg = DatasetConfig(
        name=name,
        targets=tuple(merged.get("targets") or ()),
        primary_target=merged.get("primary_target"),
        roles=merged["roles"],
        eligibility=merged.get("eligibility"),
        weight_column=merged.get("weight_column"),
        key_column=merged.get("key_column"),
        domain_column=merged.get("domain_column"),
        group_column=merged.get("group_column"),
        strata_columns=tuple(merged.get("strata_columns") or ()),
        source_domain=merged.get("source_domain"),
        target_domain=merged.get("target_domain"),
        missing_indicators=bool(merged.get("missing_indicators", False)),
    )
    return LoadedData(dataset=build_dataset(frame, cfg), inputs=inputs, raw_groups=groups)


def _sha256_bytes(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sha256_frame(frame: pd.DataFrame) -> str:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return hashlib.sha256(buf.getvalue().encode()).hexdigest()
