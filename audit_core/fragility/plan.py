"""What a Fragility audit will run, and its size, decided before any work starts.

The audit's cost is set by three numbers: the cases certified, the evidence
groups ``G`` and the transformed columns ``F``. Certificates need about
``G + 1 + 215`` perturbed rows per case (at the defaults), each ``F`` values
wide, so their work grows with ``G · F`` per case; group-SHAP, permutation
importance and beam search add work that grows with ``G²`` (rows per case
proportional to ``G``, each ``F ≥ G`` wide).

:func:`plan_audit` therefore

* skips group-SHAP, permutation importance and beam search above
  ``AUDIT_MAX_QUADRATIC_GROUPS`` groups (a note names the variable), as the
  exact search is skipped above ``AUDIT_MAX_EXACT_GROUPS``;
* adds up the values (rows × columns) every remaining stage will build and
  predict and refuses the audit up front, with ``FR_TOO_MUCH_WORK`` naming
  ``AUDIT_MAX_FRAGILITY_CELLS``, when the total exceeds it.

Memory does not depend on this total: every stage works in chunks of at most
``chunk_mb`` (:mod:`.work`). The total bounds the *time*.
"""
from __future__ import annotations

from dataclasses import dataclass

from audit_core.errors import fail, register_messages

from .certificate import CertificateSettings
from .engine import certificate_cells

__all__ = ["AuditPlan", "plan_audit"]

register_messages(
    {
        "FR_TOO_MUCH_WORK": (
            "This Fragility audit would build and predict about {cells:,} values ({cases:,} cases × {groups:,} "
            "evidence groups × {features:,} transformed columns, {detail}), more than the cap of {cap:,} "
            "(AUDIT_MAX_FRAGILITY_CELLS). Lower the case-sample cap, assign the columns to fewer evidence groups, "
            "or raise AUDIT_MAX_FRAGILITY_CELLS."
        ),
    }
)


@dataclass(frozen=True)
class AuditPlan:
    """Which optional stages run, the values each will build, and the notes about skipped stages."""

    shap: bool
    permutation: bool
    beam: bool
    exact: bool
    cells: dict[str, int]
    notes: tuple[str, ...]

    @property
    def total(self) -> int:
        return int(sum(self.cells.values()))


def plan_audit(
    proto: CertificateSettings, *, n_cases: int, n_features: int, engine: str, options, n_search: int,
) -> AuditPlan:
    """Decide the stages of an audit of ``n_cases`` cases and bound its work.

    Parameters
    ----------
    proto : CertificateSettings
        The certificate protocol (groups, ``K``, grid, draws).
    n_cases, n_features : int
    engine : str
        The certificate engine that will run (``linear`` builds no rows).
    options : AuditOptions
        Caps (``max_quadratic_groups``, ``exact_max_groups``, ``max_cells``) and stage sizes.
    n_search : int
        Cases given to the exact and beam searches.

    Raises
    ------
    AuditInputError
        ``FR_TOO_MUCH_WORK`` when the planned values exceed ``options.max_cells``.
    """
    G, F = proto.n_groups, int(n_features)
    quad_ok = G <= options.max_quadratic_groups
    shap = quad_ok and n_cases <= options.shap_max_cases
    exact = G <= options.exact_max_groups
    notes = []
    if not quad_ok:
        notes.append(
            f"group-SHAP, permutation importance and beam search skipped: {G:,} evidence groups exceed their cap of "
            f"{options.max_quadratic_groups:,} (their cost grows with the square of the groups); raise it with the "
            "environment variable AUDIT_MAX_QUADRATIC_GROUPS."
        )
    cert = certificate_cells(proto, n_cases, F, engine=engine)
    cells = {
        "certificates and the random-order ablation": 2 * cert,
        "donor replacement": n_cases * options.stress_draws * F,
    }
    if options.baseline_sensitivity:
        cells["baseline sensitivity"] = 4 * cert
    if quad_ok:
        cells["permutation importance"] = n_cases * G * options.perm_repeats * F
        cells["beam search"] = n_search * options.beam_width * G * proto.k * F
    if shap:
        cells["group-SHAP"] = n_cases * 2 * (2 * G + 1) * 20 * F
    if exact:
        cells["exact search"] = n_search * options.exact_budget * F
    plan = AuditPlan(shap=shap, permutation=quad_ok, beam=quad_ok, exact=exact, cells=cells, notes=tuple(notes))
    if plan.total > options.max_cells:
        biggest = max(cells, key=lambda k: cells[k])
        raise fail("FR_TOO_MUCH_WORK", cells=plan.total, cases=n_cases, groups=G, features=F, cap=int(options.max_cells),
                   detail=f"mostly {biggest}")
    return plan
