"""The fragility certificate: a frozen, JSON-serialisable record of one case.

A :class:`Certificate` carries its full :class:`CertificateSettings` (grouping hash and
group columns, baseline kind *and values*, column scales, ``K``, path mode,
operator families, severity grid, draws and seed, FDS weights), so
:func:`audit_core.fragility.verify.verify` can recompute it from the model and the
case alone. :class:`CertificateBatch` holds the same quantities as arrays for
many cases and hands out certificates on demand.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = ["CertificateSettings", "Certificate", "CertificateBatch"]

register_messages(
    {
        "FR_BAD_CERTIFICATE": "This is not a fragility certificate: {detail}",
    }
)

_GRID_DEFAULT = tuple(round(0.1 * i, 10) for i in range(1, 11))


def _three(values: Any) -> tuple[float, float, float]:
    """The protocol's three weights, as floats."""
    a, b, c = (float(v) for v in values)
    return a, b, c


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


@dataclass(frozen=True, kw_only=True)
class CertificateSettings:
    """Everything needed to recompute a certificate besides the model and case.

    Attributes
    ----------
    grouping_hash : str
    group_names : tuple of str, length n_groups
    group_columns : tuple of tuple of int
        Transformed column indices of each group.
    baseline_kind : str
    baseline : tuple of float, length n_features
    scale : tuple of float, length n_features
        Training standard deviation per column (``noise`` family).
    k : int
        Audit depth ``K``.
    path : {"static", "adaptive", "random"}
        ``random`` is the ablation "FDS over a random group order".
    families : tuple of str
    grid : tuple of float
        Severity grid ``Λ``, increasing.
    n_draws : int
        ``R`` draws of the stochastic families.
    seed : int
    weights : tuple of 3 float
        ``(ω1, ω2, ω3)``.
    eps : float
    """

    grouping_hash: str
    group_names: tuple[str, ...]
    group_columns: tuple[tuple[int, ...], ...]
    baseline_kind: str
    baseline: tuple[float, ...]
    scale: tuple[float, ...]
    k: int
    path: str = "static"
    families: tuple[str, ...] = ("interpolate", "dropout", "noise")
    grid: tuple[float, ...] = _GRID_DEFAULT
    n_draws: int = 10
    seed: int = 0
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    eps: float = 1e-8

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @property
    def columns(self) -> tuple[np.ndarray, ...]:
        return tuple(np.asarray(c, dtype=int) for c in self.group_columns)

    def to_dict(self) -> dict[str, Any]:
        return _plain(
            {
                "grouping_hash": self.grouping_hash,
                "group_names": self.group_names,
                "group_columns": self.group_columns,
                "baseline_kind": self.baseline_kind,
                "baseline": self.baseline,
                "scale": self.scale,
                "k": self.k,
                "path": self.path,
                "families": self.families,
                "grid": self.grid,
                "n_draws": self.n_draws,
                "seed": self.seed,
                "weights": self.weights,
                "eps": self.eps,
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CertificateSettings":
        try:
            return cls(
                grouping_hash=str(d["grouping_hash"]),
                group_names=tuple(d["group_names"]),
                group_columns=tuple(tuple(int(i) for i in c) for c in d["group_columns"]),
                baseline_kind=str(d["baseline_kind"]),
                baseline=tuple(float(v) for v in d["baseline"]),
                scale=tuple(float(v) for v in d["scale"]),
                k=int(d["k"]),
                path=str(d["path"]),
                families=tuple(d["families"]),
                grid=tuple(float(v) for v in d["grid"]),
                n_draws=int(d["n_draws"]),
                seed=int(d["seed"]),
                weights=_three(d["weights"]),
                eps=float(d["eps"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise fail("FR_BAD_CERTIFICATE", detail=f"protocol field {exc}") from None


@dataclass(frozen=True, kw_only=True)
class Certificate:
    """Counterfactual fragility certificate of one case (SPEC §1).

    Attributes
    ----------
    protocol : CertificateSettings
    key : str or int
        The sample key.
    y_hat : int
        Predicted class code.
    p_hat : float
        Its (clipped) probability.
    m0 : float
        Margin ``m(x)`` in pseudo-logits.
    delta : tuple of float, length n_groups
        One-step drops ``Δ_g`` in group order.
    order : tuple of int, length n_groups
        ``π``: groups by ``Δ_g``, largest first, ties by group index.
    path_groups : tuple of int, length K
        Groups removed at steps ``1..K`` (static: ``π_1..π_K``).
    path_margins : tuple of float, length K+1
        ``m_ŷ(x^(k))`` for ``k = 0..K``.
    path_labels : tuple of int, length K+1
    k_star : int
        In ``[1, K+1]``; ``K+1`` means no flip within the depth.
    rcma : float
    curves : dict family -> tuple of float, length L
        Margin (mean over draws for stochastic families) versus severity.
    flip_rates : dict family -> tuple of float, length L
    lambda_star : dict family -> float or None
    d_family : dict family -> float
    d : float
    fds : float
    """

    protocol: CertificateSettings
    key: Any
    y_hat: int
    p_hat: float
    m0: float
    delta: tuple[float, ...]
    order: tuple[int, ...]
    path_groups: tuple[int, ...]
    path_margins: tuple[float, ...]
    path_labels: tuple[int, ...]
    k_star: int
    rcma: float
    curves: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    flip_rates: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    lambda_star: Mapping[str, float | None] = field(default_factory=dict)
    d_family: Mapping[str, float] = field(default_factory=dict)
    d: float = 0.0
    fds: float = 0.0

    _SCALARS = ("y_hat", "p_hat", "m0", "k_star", "rcma", "d", "fds")

    def removal_order_names(self) -> list[str]:
        """Group names along the removal path."""
        return [self.protocol.group_names[g] for g in self.path_groups]

    def to_dict(self) -> dict[str, Any]:
        out = {"protocol": self.protocol.to_dict(), "key": _plain(self.key)}
        for name in (
            "y_hat", "p_hat", "m0", "delta", "order", "path_groups", "path_margins",
            "path_labels", "k_star", "rcma", "curves", "flip_rates", "lambda_star",
            "d_family", "d", "fds",
        ):
            out[name] = _plain(getattr(self, name))
        return out

    def to_json(self) -> str:
        """JSON text; floats are written with ``repr`` so they round-trip exactly."""
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Certificate":
        if not isinstance(d, Mapping) or "protocol" not in d:
            raise fail("FR_BAD_CERTIFICATE", detail="no protocol")
        try:
            return cls(
                protocol=CertificateSettings.from_dict(d["protocol"]),
                key=d["key"],
                y_hat=int(d["y_hat"]),
                p_hat=float(d["p_hat"]),
                m0=float(d["m0"]),
                delta=tuple(float(v) for v in d["delta"]),
                order=tuple(int(v) for v in d["order"]),
                path_groups=tuple(int(v) for v in d["path_groups"]),
                path_margins=tuple(float(v) for v in d["path_margins"]),
                path_labels=tuple(int(v) for v in d["path_labels"]),
                k_star=int(d["k_star"]),
                rcma=float(d["rcma"]),
                curves={k: tuple(float(x) for x in v) for k, v in d["curves"].items()},
                flip_rates={k: tuple(float(x) for x in v) for k, v in d["flip_rates"].items()},
                lambda_star={k: (None if v is None else float(v)) for k, v in d["lambda_star"].items()},
                d_family={k: float(v) for k, v in d["d_family"].items()},
                d=float(d["d"]),
                fds=float(d["fds"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise fail("FR_BAD_CERTIFICATE", detail=f"field {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> "Certificate":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise fail("FR_BAD_CERTIFICATE", detail=str(exc)) from None
        return cls.from_dict(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Certificate) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, kw_only=True, eq=False)
class CertificateBatch:
    """Certificates of ``n`` cases as arrays (what the engine computes).

    Attributes
    ----------
    protocol : CertificateSettings
    keys : ndarray of shape (n,)
    p0 : ndarray of shape (n, n_classes)
        Clipped probabilities of the unperturbed cases.
    y_hat, k_star : int ndarray of shape (n,)
    p_hat, m0, rcma, d, fds : ndarray of shape (n,)
    delta : ndarray of shape (n, n_groups)
    order : int ndarray of shape (n, n_groups)
    path_groups : int ndarray of shape (n, K)
    path_margins : ndarray of shape (n, K+1)
    path_labels : int ndarray of shape (n, K+1)
    curves, flip_rates : dict family -> ndarray of shape (n, L)
    j_star : dict family -> int ndarray of shape (n,)
        1-based grid index of ``λ*_P``; ``L+1`` when there is no flip.
    d_family : dict family -> ndarray of shape (n,)
    complete : bool
        False when the run was cancelled; the arrays then hold the cases
        certified before the stop.
    n_requested : int
    engine : str
        The engine that computed the batch (``linear``, ``distinct`` or
        ``generic``; see :mod:`audit_core.fragility.engine`).
    n_predicted : int
        Perturbed rows the ``distinct`` engine predicted (0 for the other engines).
    """

    protocol: CertificateSettings
    keys: np.ndarray
    p0: np.ndarray
    y_hat: np.ndarray
    p_hat: np.ndarray
    m0: np.ndarray
    delta: np.ndarray
    order: np.ndarray
    path_groups: np.ndarray
    path_margins: np.ndarray
    path_labels: np.ndarray
    k_star: np.ndarray
    rcma: np.ndarray
    curves: Mapping[str, np.ndarray]
    flip_rates: Mapping[str, np.ndarray]
    j_star: Mapping[str, np.ndarray]
    d_family: Mapping[str, np.ndarray]
    d: np.ndarray
    fds: np.ndarray
    complete: bool = True
    n_requested: int = 0
    engine: str = ""
    n_predicted: int = 0

    def __len__(self) -> int:
        return int(len(self.keys))

    def lambda_star(self, family: str) -> np.ndarray:
        """``λ*_P`` per case, NaN where no severity flips."""
        grid = np.asarray(self.protocol.grid + (np.nan,))
        return grid[self.j_star[family] - 1]

    def certificate(self, i: int) -> Certificate:
        """The certificate of case ``i`` (position in the batch)."""
        fams = self.protocol.families
        lam = {f: self.lambda_star(f)[i] for f in fams}
        return Certificate(
            protocol=self.protocol,
            key=_plain(self.keys[i]),
            y_hat=int(self.y_hat[i]),
            p_hat=float(self.p_hat[i]),
            m0=float(self.m0[i]),
            delta=tuple(float(v) for v in self.delta[i]),
            order=tuple(int(v) for v in self.order[i]),
            path_groups=tuple(int(v) for v in self.path_groups[i]),
            path_margins=tuple(float(v) for v in self.path_margins[i]),
            path_labels=tuple(int(v) for v in self.path_labels[i]),
            k_star=int(self.k_star[i]),
            rcma=float(self.rcma[i]),
            curves={f: tuple(float(v) for v in self.curves[f][i]) for f in fams},
            flip_rates={f: tuple(float(v) for v in self.flip_rates[f][i]) for f in fams},
            lambda_star={f: (None if np.isnan(lam[f]) else float(lam[f])) for f in fams},
            d_family={f: float(self.d_family[f][i]) for f in fams},
            d=float(self.d[i]),
            fds=float(self.fds[i]),
        )

    def to_jsonl(self, rows: np.ndarray | None = None) -> str:
        """JSON lines, one certificate per line (``rows`` selects positions)."""
        idx = range(len(self)) if rows is None else rows
        return "".join(self.certificate(int(i)).to_json() + "\n" for i in idx)

    def to_frame(self) -> pd.DataFrame:
        """One row per case: key, ŷ, p̂, m0, k*, RCMA, d (and per family), λ*, FDS."""
        out = {
            "key": self.keys,
            "y_hat": self.y_hat,
            "p_hat": self.p_hat,
            "m0": self.m0,
            "k_star": self.k_star,
            "rcma": self.rcma,
            "d": self.d,
            "fds": self.fds,
            "max_delta": self.delta.max(axis=1),
        }
        for f in self.protocol.families:
            out[f"d_{f}"] = self.d_family[f]
            out[f"lambda_{f}"] = self.lambda_star(f)
        return pd.DataFrame(out)

    def delta_frame(self) -> pd.DataFrame:
        """Case × group matrix of ``Δ_g`` (index: key, columns: group names)."""
        return pd.DataFrame(self.delta, index=pd.Index(self.keys, name="key"), columns=list(self.protocol.group_names))
