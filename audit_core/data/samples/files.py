"""The sample files: write them byte-identically, and load a catalogued sample (generating the loan file if missing)."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from .breast_cancer import load_breast_cancer_sample
from .catalogue import LOAN_FILE_NAME, LOAN_N_SOURCE, LOAN_N_TARGET, LOAN_SEED, SAMPLE_DIR, SAMPLES, SampleInfo
from .loan import make_loan_sample

__all__ = ["write_samples", "load_sample", "main"]




def _loan_frame_for_file() -> pd.DataFrame:
    return make_loan_sample(
        n_source=LOAN_N_SOURCE,
        n_target=LOAN_N_TARGET,
        seed=LOAN_SEED,
        covariate_shift=1.0,
        prevalence_shift=1.0,
        concept_shift=1.0,
    )


def _write_csv_atomic(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            frame.to_csv(fh, index=False, lineterminator="\n")
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the sample is a public file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_samples(directory: str | os.PathLike | None = None) -> list[Path]:
    """Write the file-backed samples; return the written paths.

    Writes ``loan_synthetic.csv`` (seed :data:`LOAN_SEED`, 4000 + 4000 rows)
    into ``directory`` (default :data:`SAMPLE_DIR`). The output is
    byte-identical on repeated runs.
    """
    target = Path(directory) if directory is not None else SAMPLE_DIR
    path = target / LOAN_FILE_NAME
    _write_csv_atomic(_loan_frame_for_file(), path)
    return [path]


_LOAN_READ_DTYPES = {
    "application_id": "str",
    "branch_id": "str",
    "region": "str",
    "employment_type": "str",
    "home_ownership": "str",
    "income_verified": "str",
    "purpose": "str",
    "defaulted": "str",
}


def _read_loan_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=_LOAN_READ_DTYPES, keep_default_na=False, na_values=[""])


def load_sample(name: str) -> tuple[pd.DataFrame, SampleInfo]:
    """Load a catalogued sample: ``(frame, info)``.

    The loan sample is read from ``sample_data/loan_synthetic.csv``; if the
    file is missing it is generated and written there (when the directory is
    writable) so the app can offer it on first start.

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`SAMPLES`; the message lists the names.
    """
    if name not in SAMPLES:
        raise KeyError(
            f"unknown sample {name!r}; available samples: {', '.join(sorted(SAMPLES))}"
        )
    info = SAMPLES[name]
    if name == "breast_cancer":
        return load_breast_cancer_sample(), info
    # loan_synthetic
    path = info.path
    assert path is not None
    if path.is_file():
        return _read_loan_csv(path), info
    frame = _loan_frame_for_file()
    try:
        _write_csv_atomic(frame, path)
    except OSError:
        return frame, info
    return _read_loan_csv(path), info


def main(argv: list[str] | None = None) -> int:
    """``python -m audit_core.data.samples [DIRECTORY]``: regenerate the files."""
    args = sys.argv[1:] if argv is None else argv
    directory = args[0] if args else None
    for path in write_samples(directory):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0
