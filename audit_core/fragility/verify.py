"""Verifying a certificate: recompute it from the model and the case alone, field by field.

A :class:`~audit_core.fragility.certificate.Certificate` carries its whole
protocol, so :func:`verify` needs nothing else than the model and the
(transformed) case; it re-runs :func:`~audit_core.fragility.engine.certify_with_protocol`
on that one row and compares every field within tolerances.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit_core.data.groups import Grouping
from audit_core.errors import fail, register_messages

from .certificate import Certificate, _plain
from .engine import certify_with_protocol

__all__ = ["VerificationReport", "verify"]


@dataclass(frozen=True)
class VerificationReport:
    """Result of :func:`verify`: ``ok`` and the fields that differ."""

    ok: bool
    mismatches: tuple[tuple[str, Any, Any], ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.mismatches), columns=["field", "certificate", "recomputed"])


register_messages(
    {
        "FR_VERIFY_GROUPING": (
            "The grouping passed to verify has hash {given}, but the certificate was made under {recorded}."
        ),
        "FR_VERIFY_RANDOM": ("Certificates on the random-order ablation path cannot be verified "
                             "(their order is not a function of the case)."),
        "FR_VERIFY_SHAPE": "The case has {n_columns} transformed columns but the certificate's protocol has {n_features}.",
    }
)


def _compare(name: str, a: Any, b: Any, rtol: float, atol: float, out: list) -> None:
    if isinstance(a, Mapping):
        for k in sorted(set(a) | set(b)):
            _compare(f"{name}.{k}", a.get(k), b.get(k), rtol, atol, out)
        return
    if a is None or b is None:
        if not (a is None and b is None):
            out.append((name, a, b))
        return
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
        out.append((name, _plain(a), _plain(b)))


def verify(
    certificate: Certificate,
    model: Any,
    x: Any,
    *,
    grouping: Grouping | None = None,
    rtol: float = 1e-7,
    atol: float = 1e-9,
) -> VerificationReport:
    """Recompute a certificate from the model and the case; report any mismatch.

    Parameters
    ----------
    certificate : Certificate
    model : FittedModel, estimator or callable
        ``predict_proba`` on the transformed space.
    x : ndarray of shape (n_features,) or one-row pandas.DataFrame
        The case, transformed; a raw one-row frame is passed through
        ``model.transform`` first.
    grouping : Grouping, optional
        When given, its hash must equal the protocol's.
    rtol, atol : float
        Tolerances on floating-point fields (integers must match exactly).

    Returns
    -------
    VerificationReport
    """
    proto = certificate.protocol
    if proto.path == "random":
        raise fail("FR_VERIFY_RANDOM")
    if grouping is not None and grouping.hash != proto.grouping_hash:
        raise fail("FR_VERIFY_GROUPING", given=grouping.hash[:12], recorded=proto.grouping_hash[:12])
    if isinstance(x, pd.DataFrame):
        x = model.transform(x)
    row = np.asarray(x, dtype=float).reshape(1, -1)
    if row.shape[1] != len(proto.baseline):
        raise fail("FR_VERIFY_SHAPE", n_columns=row.shape[1], n_features=len(proto.baseline))
    batch = certify_with_protocol(model, row, proto, keys=np.array([certificate.key], dtype=object))
    fresh = batch.certificate(0).to_dict()
    mine = certificate.to_dict()
    out: list = []
    for name in ("y_hat", "k_star", "order", "path_groups", "path_labels"):
        if mine[name] != fresh[name]:
            out.append((name, mine[name], fresh[name]))
    for name in ("p_hat", "m0", "delta", "path_margins", "rcma", "curves", "flip_rates", "lambda_star", "d_family", "d", "fds"):
        _compare(name, mine[name], fresh[name], rtol, atol, out)
    return VerificationReport(ok=not out, mismatches=tuple(out))
