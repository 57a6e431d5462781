"""Size and time caps, read from the environment in one place.

Every cap that protects the server from a large or hostile input is a field
of :class:`Limits`. :meth:`Limits.from_env` is the only code that reads the
``AUDIT_MAX_*`` variables; the app and the CLI call it where they build read
options, fragility options and the Receipts cube. A message about a cap that
was hit names the variable to change.

=========================  =======  ==============================================
variable                   default  caps
=========================  =======  ==============================================
``AUDIT_MAX_UPLOAD_MB``    200      bytes of one uploaded or configured table (and of a stack of text files)
``AUDIT_MAX_ROWS``         5000000  rows of a table, counted while it is read
``AUDIT_MAX_COLUMNS``      10000    columns of a table
``AUDIT_MAX_EXPANSION_MB`` 2000     uncompressed size of an xlsx, gzip or Parquet file, skops model or bundle
``AUDIT_MAX_MATRIX_MB``    1000     dense transformed training matrix (rows x one-hot-expanded features x 8 bytes)
``AUDIT_MAX_EXACT_GROUPS`` 20       evidence groups for the fragility exact search
``AUDIT_MAX_CUBE_K``       12       sources of a Receipts cube (2**k cells)
=========================  =======  ==============================================

**A bounded intake.** A compressed table (gzip text, an xlsx workbook, a
Parquet file) may expand to at most :data:`EXPANSION_PER_UPLOAD` times the
upload cap, and never past the expansion cap (:func:`table_cap`): compressed
or not, a table holds at most one upload's worth, so a 1 MB gzip file cannot
ask for more than a 200 MB upload could. Gzip is expanded in steps and
stopped at the cap; the rows are counted while they are read. Reading one
table (or one stack of text files) then peaks at most
:data:`INTAKE_MEMORY_PER_UPLOAD` times the upload cap above the memory in use
before the read, plus :data:`INTAKE_MEMORY_FLOOR_MB` for the reader's fixed
buffers (``tests/test_intake_bounded.py`` measures it at small caps;
``benchmarks/intake_memory.py`` at the defaults). The multiple is measured,
not derived: the costliest shape of text found, 4.2 million rows of 40 mostly
empty cells in a 200 MB file, peaks 2,519 MB above the base (12.6 times the
cap), because every cell costs about 10 bytes as text and 8 as a number.

**Counts.** Every whole number of work a CLI config, an options object or an
app widget takes (replicates, refits, cases, draws, grid points, ...) is
bounded by one entry of :data:`COUNTS`, overridable by its ``AUDIT_MAX_*``
variable up to a hard ceiling. :data:`COUNT_FIELDS` says which field of which
schema is which count; :meth:`Limits.check_fields` refuses a value over its
bound with ``LIMIT_COUNT``, naming the field, the bound and the variable. The
table of counts is in ``docs/reliability.md``.

Fragility work (the audit's up-front bound and the parts whose cost grows with
the square of the evidence groups):

* ``AUDIT_MAX_QUADRATIC_GROUPS`` (200): evidence groups above which group-SHAP,
  permutation importance and beam search are skipped, with a note naming it;
* ``AUDIT_MAX_FRAGILITY_CELLS`` (4e9): values (rows × transformed columns) a
  Fragility audit may build and predict; above it the audit is refused up
  front with ``FR_TOO_MUCH_WORK``.

**Other settings.** The variables that are not caps (:data:`SETTINGS`: the
registry file, the age of a stale run, the BLAS thread count, the Chromium
executable, the demo's size) are read through :func:`setting` here too, and
parsed by the module that uses them; no other module reads an ``AUDIT_*``
variable (``tests/test_architecture.py`` scans for it).

**Minimums.** :data:`MIN_PARTITION_CLASS_ROWS` is not a cap but the fewest
records of one class a Transport source partition should hold: below it the
run carries a ``TRANSPORT_FEW_IN_PARTITION`` warning naming the partition,
the class and the count (:mod:`audit_core.transport.cautions`).

This module is pure: it must not import streamlit or plotly.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sized
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import fail, register_messages

__all__ = ["COUNTS", "COUNT_FIELDS", "Count", "ENV_VARS", "EXPANSION_PER_UPLOAD", "INTAKE_MEMORY_FLOOR_MB",
           "INTAKE_MEMORY_PER_UPLOAD", "Limits", "MIN_PARTITION_CLASS_ROWS", "SETTINGS", "setting", "table_cap"]

#: Fewest records of one class in a Transport source partition (train, calibration, selection, ID test) before
#: the run warns that what is fitted or measured on that partition rests on too few records.
MIN_PARTITION_CLASS_ROWS = 20

_MB = 1024 * 1024
#: Hard ceiling of AUDIT_MAX_CUBE_K: 2**20 cells is about a million adjudications.
_CUBE_K_CEILING = 20

#: A compressed table may expand to at most this many times the upload cap (and never past the expansion cap).
EXPANSION_PER_UPLOAD = 1
#: Reading one table peaks at most this many times the upload cap above the memory in use before the read ...
INTAKE_MEMORY_PER_UPLOAD = 14
#: ... plus this many MB for the reader's fixed buffers (samples, chunks, the csv module's state).
INTAKE_MEMORY_FLOOR_MB = 64


def table_cap(upload_bytes: int, expansion_bytes: int) -> tuple[int, str]:
    """The most bytes a compressed table may expand to, and the variable that sets it.

    Parameters
    ----------
    upload_bytes, expansion_bytes : int
        The upload cap and the expansion cap in bytes.

    Returns
    -------
    cap : int
        ``min(EXPANSION_PER_UPLOAD * upload_bytes, expansion_bytes)``.
    variable : str
        ``AUDIT_MAX_UPLOAD_MB`` when the upload cap binds (ties included), else ``AUDIT_MAX_EXPANSION_MB``.

    Examples
    --------
    >>> table_cap(200 * 2**20, 2000 * 2**20)
    (209715200, 'AUDIT_MAX_UPLOAD_MB')
    >>> table_cap(200 * 2**20, 1 * 2**20)
    (1048576, 'AUDIT_MAX_EXPANSION_MB')
    """
    by_upload = int(EXPANSION_PER_UPLOAD * upload_bytes)
    if by_upload <= expansion_bytes:
        return by_upload, "AUDIT_MAX_UPLOAD_MB"
    return int(expansion_bytes), "AUDIT_MAX_EXPANSION_MB"


#: Settings that are not caps: variable -> what it sets (the README's configuration table says more).
SETTINGS: dict[str, str] = {
    "AUDIT_REGISTRY_PATH": "run registry file (default ~/.reliability_audit/registry.sqlite3)",
    "AUDIT_STALE_RUN_HOURS": "age in hours after which another host's running run counts as interrupted (72)",
    "AUDIT_BLAS_THREADS": "the fixed BLAS thread count of the process (1)",
    "AUDIT_CHROMIUM": "the Chromium executable that prints the PDF report (default: the first on PATH)",
    "AUDIT_DEMO_SIZE": "'quick' runs Home's demo with small sizes",
}


def setting(name: str, env: Mapping[str, str] | None = None) -> str:
    """The value of the setting ``name`` in ``env`` (default :data:`os.environ`), stripped; ``""`` when unset.

    Parameters
    ----------
    name : str
        One of :data:`SETTINGS`; any other name is a programming error (``KeyError``).
    env : mapping, optional

    Examples
    --------
    >>> setting("AUDIT_DEMO_SIZE", {"AUDIT_DEMO_SIZE": " quick "})
    'quick'
    >>> setting("AUDIT_DEMO_SIZE", {})
    ''
    """
    if name not in SETTINGS:
        raise KeyError(f"{name} is not a declared setting; add it to audit_core.limits.SETTINGS")
    return (os.environ if env is None else env).get(name, "").strip()


#: field name -> (environment variable, default, minimum, maximum)
ENV_VARS: dict[str, tuple[str, float, float, float]] = {
    "max_upload_mb": ("AUDIT_MAX_UPLOAD_MB", 200, 0.001, 1_000_000),
    "max_rows": ("AUDIT_MAX_ROWS", 5_000_000, 1, 10**10),
    "max_columns": ("AUDIT_MAX_COLUMNS", 10_000, 1, 10**7),
    "max_expansion_mb": ("AUDIT_MAX_EXPANSION_MB", 2_000, 0.001, 10_000_000),
    "max_matrix_mb": ("AUDIT_MAX_MATRIX_MB", 1_000, 0.001, 1_000_000),
    "max_exact_groups": ("AUDIT_MAX_EXACT_GROUPS", 20, 1, 64),
    "max_cube_k": ("AUDIT_MAX_CUBE_K", 12, 1, _CUBE_K_CEILING),
    "max_quadratic_groups": ("AUDIT_MAX_QUADRATIC_GROUPS", 200, 1, 100_000),
    "max_fragility_cells": ("AUDIT_MAX_FRAGILITY_CELLS", 4e9, 1e3, 1e15),
}

register_messages(
    {
        "LIMIT_BAD_VALUE": (
            "The environment variable {var} is {value!r}; it must be a number from {low:g} to {high:g} "
            "(default {default:g}). Fix or unset {var}."
        ),
        "LIMIT_COUNT": (
            "{where} asks for {value:,} {noun}; the most allowed is {bound:,} (limit {var}). "
            "Use a smaller value, or set the environment variable {var} (at most {ceiling:,})."
        ),
    }
)


class Count(NamedTuple):
    """One bounded count: its variable, default bound, hard ceiling and what it counts (plural)."""

    var: str
    default: int
    ceiling: int
    noun: str


#: count -> its bound. Every count field of :data:`COUNT_FIELDS` names one of these.
COUNTS: dict[str, Count] = {
    "bootstrap": Count("AUDIT_MAX_BOOTSTRAP", 10_000, 10_000_000, "bootstrap replicates"),
    "refits": Count("AUDIT_MAX_REFITS", 100, 100_000, "model refits"),
    "cases": Count("AUDIT_MAX_CASES", 100_000, 100_000_000, "cases"),
    "benchmark_cases": Count("AUDIT_MAX_BENCHMARK_CASES", 20_000, 10_000_000, "benchmark cases"),
    "draws": Count("AUDIT_MAX_DRAWS", 200, 100_000, "random draws"),
    "repeats": Count("AUDIT_MAX_REPEATS", 100, 100_000, "permutation repeats"),
    "list_items": Count("AUDIT_MAX_LIST_ITEMS", 100, 100_000, "entries in one list (grid points, thresholds, rates, ...)"),
    "depth": Count("AUDIT_MAX_DEPTH", 1_000, 1_000_000, "groups or features at once (depth, donors, budget)"),
    "search": Count("AUDIT_MAX_SEARCH", 100_000, 100_000_000, "search evaluations"),
    "beam": Count("AUDIT_MAX_BEAM", 1_000, 1_000_000, "beam candidates"),
    "chunk": Count("AUDIT_MAX_CHUNK", 1_000_000, 1_000_000_000, "items per batch chunk"),
    "random_sets": Count("AUDIT_MAX_RANDOM_SETS", 1_000, 1_000_000, "random feature sets"),
    "rows": Count("AUDIT_MAX_STRESS_ROWS", 5_000_000, 10**10, "rows"),
    "bins": Count("AUDIT_MAX_BINS", 1_000, 1_000_000, "bins"),
    "epochs": Count("AUDIT_MAX_EPOCHS", 300, 1_000_000, "training epochs"),
    "width": Count("AUDIT_MAX_WIDTH", 512, 1_000_000, "hidden units"),
    "blocks": Count("AUDIT_MAX_BLOCKS", 64, 10_000, "residual blocks"),
    "workers": Count("AUDIT_MAX_WORKERS", 64, 4_096, "worker processes"),
    "model_size": Count("AUDIT_MAX_MODEL_SIZE", 100_000, 100_000_000, "model-size units (trees, iterations, leaves, ...)"),
    "trees": Count("AUDIT_MAX_TREES", 5_000, 1_000_000, "trees or boosting rounds"),
    "iterations": Count("AUDIT_MAX_ITERATIONS", 10_000, 10_000_000, "solver iterations or training epochs"),
    # Imported run bundles (audit_core.runs.bundle.read_bundle): what one bundle may hold.
    "bundle_tables": Count("AUDIT_MAX_BUNDLE_TABLES", 200, 100_000, "tables (or artifacts) in one run bundle"),
    "bundle_columns": Count("AUDIT_MAX_BUNDLE_COLUMNS", 10_000, 1_000_000, "columns in one table of a run bundle"),
    "cell_chars": Count("AUDIT_MAX_CELL_CHARS", 100_000, 1_000_000_000, "characters in one text cell of a run bundle"),
}

#: schema -> field -> count. A schema is a CLI audit entry (``model``, ``fragility``,
#: ``receipts``, ``transport``), an options class of an audit entry point, or the
#: app's widgets (``widgets``: widget key -> count). An int field is bounded by its
#: value, a list field by its length. ``tests/test_hardening_bounds.py`` fails when a
#: count field of any of these is missing here.
COUNT_FIELDS: dict[str, dict[str, str]] = {
    "model": {"bootstrap": "bootstrap", "chunk_size": "chunk", "refit_seeds": "refits"},
    # the config's model.params (and every ModelSpec, also from the app): every whole number (or list of them)
    # except seeds; "*" = every other key. The named ones are bounded even when given as a float (1e9).
    "model_params": {"*": "model_size", "n_estimators": "trees", "max_iter": "iterations",
                     "hidden_layer_sizes": "width"},
    "fragility": {
        "max_cases": "cases", "chunk_size": "chunk", "k": "depth", "families": "list_items", "grid": "list_items",
        "n_draws": "draws", "donor_groups": "depth", "stress_draws": "draws", "thresholds": "list_items",
        "missing_codes": "list_items", "n_boot": "bootstrap", "perm_repeats": "repeats", "shap_max_cases": "cases",
        "search_max_cases": "cases", "exact_budget": "search", "beam_width": "beam",
    },
    "receipts": {"n_cases": "benchmark_cases"},
    "transport": {
        "n_refits": "refits", "n_bootstrap": "bootstrap", "degradation_m": "depth", "n_random_sets": "random_sets",
        "stress_max_rows": "rows", "models": "list_items", "mappings": "list_items", "alphas": "list_items",
        "selection_rates": "list_items", "stresses": "list_items", "subgroup_columns": "list_items",
    },
    "AuditOptions": {
        "max_cases": "cases", "donor_groups": "depth", "stress_draws": "draws", "thresholds": "list_items",
        "missing_codes": "list_items", "n_boot": "bootstrap", "perm_repeats": "repeats", "shap_max_cases": "cases",
        "search_max_cases": "cases", "exact_budget": "search", "beam_width": "beam",
    },
    "FragilityConfig": {"k": "depth", "families": "list_items", "grid": "list_items", "n_draws": "draws"},
    "BenchmarkConfig": {"n_cases": "benchmark_cases"},
    "FRResMLP": {"epochs": "epochs", "width": "width", "n_blocks": "blocks", "batch_size": "chunk"},
    "TransportConfig": {
        "n_refits": "refits", "n_bootstrap": "bootstrap", "degradation_m": "depth", "n_random_sets": "random_sets",
        "stress_max_rows": "rows", "mi_max_rows": "rows", "shift_max_rows": "rows", "n_bins": "bins", "models": "list_items",
        "mappings": "list_items", "alphas": "list_items", "selection_rates": "list_items",
        "hcep_thresholds": "list_items", "stresses": "list_items", "subgroup_columns": "list_items",
        "targets": "list_items", "score_columns": "list_items",
    },
    "cli": {"n_jobs": "workers", "dask_local": "workers"},
    "widgets": {
        "fr_max_cases": "cases", "fr_k": "depth", "fr_draws": "draws", "fr_neural_epochs": "epochs", "fr_neural_width": "width",
        "tr_refits": "refits", "tr_bootstrap": "bootstrap", "tr_m": "depth", "tr_sets": "random_sets",
        "tr_cap": "rows", "rc_bench_n": "benchmark_cases",
    },
}


def _default_counts() -> tuple[tuple[str, int], ...]:
    return tuple((name, c.default) for name, c in COUNTS.items())


def _read(field_name: str, env: Mapping[str, str]) -> float:
    var, default, low, high = ENV_VARS[field_name]
    raw = env.get(var, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (low <= value <= high):  # also refuses nan
        raise fail("LIMIT_BAD_VALUE", var=var, value=raw[:40], low=low, high=high, default=default)
    return value


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The caps in force; see the module docstring for the variables.

    Examples
    --------
    >>> lim = Limits.from_env({"AUDIT_MAX_COLUMNS": "50"})
    >>> lim.max_columns, lim.max_expansion_bytes
    (50, 2097152000)
    >>> Limits.from_env({}).max_cube_k
    12
    """

    max_upload_mb: float = 200
    max_rows: int = 5_000_000
    max_columns: int = 10_000
    max_expansion_mb: float = 2_000
    max_matrix_mb: float = 1_000
    max_exact_groups: int = 20
    max_cube_k: int = 12
    max_quadratic_groups: int = 200
    max_fragility_cells: int = 4_000_000_000
    #: ``(count, bound)`` for every entry of :data:`COUNTS` (a tuple, so the caps stay hashable).
    counts: tuple[tuple[str, int], ...] = field(default_factory=_default_counts)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Limits":
        """Read the caps from ``env`` (default :data:`os.environ`).

        Raises
        ------
        AuditInputError
            ``LIMIT_BAD_VALUE`` naming the variable when a value is not a
            number in its range.
        """
        env = os.environ if env is None else env
        ints = {"max_rows", "max_columns", "max_exact_groups", "max_cube_k", "max_quadratic_groups",
                "max_fragility_cells"}
        values: dict[str, Any] = {}
        for name in ENV_VARS:
            v = _read(name, env)
            values[name] = int(v) if name in ints else float(v)
        counts = []
        for name, c in COUNTS.items():
            raw = env.get(c.var, "").strip()
            try:
                bound = float(raw) if raw else c.default
            except ValueError:
                bound = float("nan")
            if not (1 <= bound <= c.ceiling) or bound != int(bound):  # also refuses nan
                raise fail("LIMIT_BAD_VALUE", var=c.var, value=raw[:40], low=1, high=c.ceiling, default=c.default)
            counts.append((name, int(bound)))
        return cls(**values, counts=tuple(counts))

    def bound(self, count: str) -> int:
        """The bound of one count of :data:`COUNTS`, e.g. ``Limits().bound("bootstrap")`` is 10,000."""
        return dict(self.counts)[count]

    def check_count(self, count: str, value: Any, *, where: str) -> None:
        """Refuse ``value`` (a whole number, or a list by its length) over the bound of ``count``.

        Raises
        ------
        AuditInputError
            ``LIMIT_COUNT`` naming ``where``, the bound and its variable.

        Examples
        --------
        >>> Limits().check_count("bootstrap", 2_000_000_000, where="audits[0].bootstrap")
        Traceback (most recent call last):
        ...
        audit_core.errors.AuditInputError: audits[0].bootstrap asks for 2,000,000,000 bootstrap replicates; \
the most allowed is 10,000 (limit AUDIT_MAX_BOOTSTRAP). Use a smaller value, or set the environment variable \
AUDIT_MAX_BOOTSTRAP (at most 10,000,000).
        """
        c = COUNTS[count]
        n = len(value) if isinstance(value, Sized) and not isinstance(value, (str, bytes)) else value
        if isinstance(n, bool) or not isinstance(n, int) and not hasattr(n, "__index__"):
            return  # not a whole number: the type is checked by the caller
        n = int(n)
        bound = self.bound(count)
        if n > bound:
            raise fail("LIMIT_COUNT", where=where, value=n, noun=c.noun, bound=bound, var=c.var, ceiling=c.ceiling)

    def check_fields(self, schema: str, values: Any, *, where: str) -> None:
        """Check every count field of ``schema`` (:data:`COUNT_FIELDS`) in ``values``.

        Parameters
        ----------
        schema : str
            A key of :data:`COUNT_FIELDS`.
        values : Mapping or object
            A config entry (dict) or an options object (fields read as attributes).
        where : str
            Prefix of the field names in messages, e.g. ``"audits[0]"``.
        """
        fields = COUNT_FIELDS[schema]
        each = "*" in fields  # every key except seeds; a list value is bounded entry by entry
        if each:
            named = fields
            keys = values if isinstance(values, Mapping) else {}
            fields = {str(k): named.get(str(k), named["*"]) for k in keys
                      if "seed" not in str(k) and str(k) != "random_state"}
        for name, count in fields.items():
            value = values.get(name) if isinstance(values, Mapping) else getattr(values, name, None)
            if each and name in named and isinstance(value, float) and math.isfinite(value):
                value = math.ceil(value)  # n_estimators: 1e9 from a JSON config is still a count
            if each and isinstance(value, (list, tuple)):  # e.g. hidden_layer_sizes: [100, 50]
                self.check_count("list_items", value, where=f"{where}.{name}")
                for i, inner in enumerate(value):
                    self.check_count(count, inner, where=f"{where}.{name}[{i}]")
                continue
            if isinstance(value, Mapping) and count == "list_items":  # e.g. missing_codes: column -> codes
                for key, inner in value.items():
                    self.check_count(count, inner, where=f"{where}.{name}.{key}")
            if value is not None:
                self.check_count(count, value, where=f"{where}.{name}")

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * _MB)

    @property
    def max_expansion_bytes(self) -> int:
        return int(self.max_expansion_mb * _MB)

    @property
    def max_table_bytes(self) -> int:
        """The most a compressed table may expand to (:func:`table_cap`)."""
        return table_cap(self.max_upload_bytes, self.max_expansion_bytes)[0]

    @property
    def max_matrix_bytes(self) -> int:
        return int(self.max_matrix_mb * _MB)
