"""Bounded work in the Fragility audit (memory and the width of work).

* Chunks are sized by bytes: wider cases mean fewer cases per chunk, and every
  blocked stage gives the same numbers as one block.
* Stop is polled and progress reported *inside* long stages, not only between
  them (before: a Stop pressed during permutation importance let the audit
  run to the end; progress jumped from 0.65 to 0.8).
* The up-front plan: the quadratic parts skipped above their group cap, the
  work counted and refused above ``AUDIT_MAX_FRAGILITY_CELLS``.
* Memory of a large certification (subprocess, peak RSS): the outputs once,
  plus chunks of bounded size (before: the chunks' arrays were concatenated,
  so they were held twice).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.data.groups import Grouping
from audit_core.errors import AuditInputError
from audit_core.fragility import FragilityConfig, beam_min_flip, certify, exact_min_flip
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from audit_core.fragility.engine import protocol_for
from audit_core.fragility.evaluation import group_shap_scores, permutation_scores
from audit_core.fragility.plan import plan_audit
from audit_core.fragility.search import _set_keys
from audit_core.fragility.stressors import donor_replacement

from fragility_data import loan_workspace
from test_fragility_engines import cases, trained

ROOT = Path(__file__).resolve().parents[1]


def _chunks(model, X, grouping, base, scale, chunk_mb):
    calls = []
    certify(model, X, grouping=grouping, baseline=base, scale=scale, config=FragilityConfig(chunk_mb=chunk_mb, n_draws=2),
            progress=lambda f, m: calls.append(f))
    return len(calls)


def test_chunks_are_sized_by_bytes_so_wider_cases_make_smaller_chunks():
    narrow, Xn, gn = trained("lightgbm", 2, "narrow")
    wide, Xw, gw = trained("lightgbm", 2, "wide")
    a = cases(0, Xn, gn, 60, neg_zero=False)
    b = cases(0, Xw, gw, 60, neg_zero=False)
    n_narrow = _chunks(narrow, a[0], gn, a[1], a[2], chunk_mb=0.5)
    n_wide = _chunks(wide, b[0], gw, b[1], b[2], chunk_mb=0.5)
    assert 1 < n_narrow < n_wide  # 14 vs 64 columns: about 4x the bytes per case


def test_blocked_stages_equal_one_block():
    model, Xtr, grouping = trained("mlp", 2, "wide")
    X, base, scale = cases(5, Xtr, grouping, 12, neg_zero=False)
    cols = grouping.index
    tiny = 0.01  # 10 KiB: many blocks, cases split over groups
    assert np.array_equal(permutation_scores(model, X, group_columns=cols, chunk_mb=tiny),
                          permutation_scores(model, X, group_columns=cols))
    assert np.array_equal(donor_replacement(model, X, Xtr, group_columns=cols, chunk_mb=tiny).flip_rate,
                          donor_replacement(model, X, Xtr, group_columns=cols).flip_rate)
    proto = protocol_for(grouping, baseline=base, scale=scale, baseline_kind="mean", config=FragilityConfig(k=3))
    for search in (beam_min_flip, exact_min_flip):
        small, big = search(model, X, proto, chunk_mb=tiny), search(model, X, proto)
        assert np.array_equal(small.min_size, big.min_size) and small.best_set == big.best_set
    s1, phi1 = group_shap_scores(model, X[:5], Xtr, group_columns=cols, chunk_mb=0.05)
    s2, phi2 = group_shap_scores(model, X[:5], Xtr, group_columns=cols)
    assert np.array_equal(phi1, phi2) and np.array_equal(s1, s2)


def test_set_keys_order_sets_like_their_bit_values_for_any_number_of_groups():
    rng = np.random.default_rng(0)
    sets = rng.random((40, 9, 30)) < 0.3
    keys = _set_keys(sets)
    bits = sets @ (2.0 ** np.arange(30))
    for i in range(40):
        assert np.array_equal(np.argsort(keys[i], kind="stable"), np.argsort(bits[i], kind="stable"))
    wide = rng.random((5, 7, 300)) < 0.5
    wide[0, 1] = wide[0, 0]
    wide[0, 2] = wide[0, 0]
    wide[0, 2, 299] = ~wide[0, 2, 299]  # differs only in the last group, past float precision of 2**g sums
    k = _set_keys(wide)
    assert k[0, 0] == k[0, 1] and k[0, 0] != k[0, 2]


def _stop_when(prefix: str):
    seen = {"stage": False, "reports": []}

    def progress(f, m):
        seen["reports"].append((f, m))
        if m.startswith(prefix):
            seen["stage"] = True

    return seen, progress, (lambda: seen["stage"])


def test_stop_is_polled_inside_the_permutation_stage():
    ws, _ = loan_workspace()
    opts = AuditOptions(max_cases=60, n_boot=10, shap_max_cases=0, config=FragilityConfig(n_draws=3, chunk_mb=0.02))
    seen, progress, stop = _stop_when("Permutation importance:")
    audit = run_fragility_audit(ws, options=opts, progress=progress, should_stop=stop)
    assert not audit.complete
    assert audit.notes[-1] == "Stopped by the user during permutation importance; the evaluation was not finished."
    assert len(audit.batch) == 60 and audit.auroc.empty


def test_progress_is_reported_inside_long_stages():
    ws, _ = loan_workspace()
    opts = AuditOptions(max_cases=60, n_boot=10, shap_max_cases=0, config=FragilityConfig(n_draws=3, chunk_mb=0.02))
    reports = []
    audit = run_fragility_audit(ws, options=opts, progress=lambda f, m: reports.append((f, m)))
    assert audit.complete
    fractions = [f for f, _ in reports]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    for stage in ("Certified", "Donor replacement:", "Permutation importance:", "Beam search:", "Exact search:"):
        inside = [f for f, m in reports if m.startswith(stage)]
        assert len(inside) >= 2, (stage, reports)


def test_plan_skips_the_quadratic_parts_and_counts_the_work():
    ws, _ = loan_workspace()
    X = ws.model.transform(ws.dataset.frame.iloc[ws.test_index[:50]])
    proto = protocol_for(ws.grouping, baseline=ws.baseline, scale=X.std(axis=0), baseline_kind="mean",
                         config=FragilityConfig())
    G, F = ws.grouping.n_groups, X.shape[1]
    opts = AuditOptions()
    full = plan_audit(proto, n_cases=50, n_features=F, engine="distinct", options=opts, n_search=50)
    assert (full.shap, full.permutation, full.beam, full.exact) == (True, True, True, True) and full.notes == ()
    # permutation importance: 50 cases × G groups × 5 repeats × F columns
    assert full.cells["permutation importance"] == 50 * G * 5 * F
    capped = plan_audit(proto, n_cases=50, n_features=F, engine="distinct", n_search=50,
                        options=replace(opts, max_quadratic_groups=G - 1))
    assert (capped.shap, capped.permutation, capped.beam) == (False, False, False)
    assert "AUDIT_MAX_QUADRATIC_GROUPS" in capped.notes[0] and f"cap of {G - 1}" in capped.notes[0]
    with pytest.raises(AuditInputError) as err:
        plan_audit(proto, n_cases=50, n_features=F, engine="distinct", n_search=50,
                   options=replace(opts, max_cells=full.total - 1))
    assert err.value.code == "FR_TOO_MUCH_WORK"
    assert f"{full.total:,} values" in err.value.message and "AUDIT_MAX_FRAGILITY_CELLS" in err.value.message


MEMORY_CHILD = r"""
import resource, sys, json
import numpy as np
from sklearn.linear_model import LogisticRegression
from audit_core.data.groups import Grouping
from audit_core.fragility import FragilityConfig, certify

n, G = int(sys.argv[1]), 30
rng = np.random.default_rng(0)
X = rng.normal(size=(n, G))
Xtr = rng.normal(size=(5000, G))
lr = LogisticRegression().fit(Xtr, (Xtr[:, :3].sum(axis=1) > 0).astype(int))
names = tuple(f"f{j}" for j in range(G))
grouping = Grouping(names, names, names, names)
certify(lr, X[:50], grouping=grouping, baseline=Xtr.mean(0), scale=Xtr.std(0))  # imports, first calls
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
b = certify(lr, X, grouping=grouping, baseline=Xtr.mean(0), scale=Xtr.std(0), config=FragilityConfig(engine=sys.argv[2]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
arrays = [b.p0, b.y_hat, b.p_hat, b.m0, b.delta, b.order, b.path_groups, b.path_margins, b.path_labels, b.k_star,
          b.rcma, b.d, b.fds] + [v for d in (b.curves, b.flip_rates, b.j_star, b.d_family) for v in d.values()]
print(json.dumps({"before": before, "peak": peak, "outputs_mb": sum(a.nbytes for a in arrays) / 2**20,
                  "engine": b.engine}))
"""


@pytest.mark.parametrize("engine, n", [("auto", 200_000), ("distinct", 40_000)])
def test_memory_is_the_outputs_once_plus_bounded_chunks(engine, n):
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n), engine], capture_output=True, text=True,
                          cwd=ROOT, timeout=900, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["engine"] == ("linear" if engine == "auto" else "distinct")
    # default chunk budget 64 MiB: the chunk's rows and its working arrays stay within a few budgets
    assert out["peak"] - out["before"] < out["outputs_mb"] + 3 * 64 + 64, out


LONG_STAGES = ("Certificates", "Random-order ablation", "Held-out stressors", "Permutation importance", "Group-SHAP",
               "Exact search", "Beam search", "Baseline sensitivity")
STAGE_OPTS = dict(max_cases=60, n_boot=10, shap_max_cases=60, baseline_sensitivity=True,
                  config=FragilityConfig(n_draws=3, chunk_mb=0.02))


def _stop_inside(stage: str):
    """A progress/should_stop pair that presses Stop at the first report *inside* ``stage`` (after its entry)."""
    state = {"entered": False, "pressed_at": None, "reports": []}

    def progress(f, m):
        state["reports"].append(m)
        if state["entered"] and state["pressed_at"] is None:
            state["pressed_at"] = len(state["reports"])
        if m == stage:
            state["entered"] = True

    return state, progress, (lambda: state["pressed_at"] is not None)


@pytest.fixture(scope="module")
def full_stage_reports():
    ws, _ = loan_workspace()
    reports = []
    audit = run_fragility_audit(ws, options=AuditOptions(**STAGE_OPTS), progress=lambda f, m: reports.append(m))
    assert audit.complete
    return reports


@pytest.mark.parametrize("stage", LONG_STAGES)
def test_stop_inside_every_long_stage_ends_that_stage_at_its_next_block(stage, full_stage_reports):
    """Stop pressed inside a stage ends the audit before the stage's next block.

    Before the fix Stop was polled only between stages: the stage ran to its
    end (more of its reports followed the press) and the note named the next
    stage. Each stage here has several blocks in a full run (``chunk_mb``
    tiny), so a stage that ignored Stop would report again.
    """
    start = full_stage_reports.index(stage)
    later = [full_stage_reports.index(s) for s in LONG_STAGES if full_stage_reports.index(s) > start]
    inside_full = full_stage_reports[start + 1:min(later, default=len(full_stage_reports))]
    assert len(inside_full) >= 2, inside_full  # the stage has more than one block to stop between
    ws, _ = loan_workspace()
    state, progress, stop = _stop_inside(stage)
    audit = run_fragility_audit(ws, options=AuditOptions(**STAGE_OPTS), progress=progress, should_stop=stop)
    assert not audit.complete
    after = state["reports"][state["pressed_at"]:]
    assert after == [], after  # no further block of this stage, and no later stage, ran
    if stage == "Certificates":
        assert 0 < len(audit.batch) < 60
        assert audit.notes[-1] == (f"Stopped by the user after {len(audit.batch)} of 60 cases; "
                                   "the evaluation was skipped.")
    else:
        assert len(audit.batch) == 60
        assert audit.notes[-1] == f"Stopped by the user during {stage.lower()}; the evaluation was not finished."


@settings(max_examples=40, deadline=None)
@given(G=st.integers(1, 1500), per_group=st.integers(1, 2), n=st.integers(1, 300), qcap=st.integers(1, 500),
       cap=st.floats(1e3, 1e11), engine=st.sampled_from(["distinct", "linear"]), path=st.sampled_from(["static", "adaptive"]))
def test_every_planned_audit_is_bounded_or_refused_up_front(G, per_group, n, qcap, cap, engine, path):
    """Any width (groups, columns) and case count: the planned work stays under the cap or is refused.

    This is what bounds the time of a wide audit (before: 1,000 groups ran past
    10 minutes, with the quadratic parts unbounded): the quadratic stages run
    exactly when G is within their cap, and the values built never exceed
    ``AUDIT_MAX_FRAGILITY_CELLS``, whatever the shape.
    """
    F = G * per_group
    feats = tuple(f"f{j}" for j in range(F))
    group_of = tuple(f"g{j // per_group}" for j in range(F))
    grouping = Grouping(feats, feats, group_of, tuple(dict.fromkeys(group_of)))
    proto = protocol_for(grouping, baseline=np.zeros(F), scale=np.ones(F), baseline_kind="mean",
                         config=FragilityConfig(path=path))
    opts = AuditOptions(max_quadratic_groups=qcap, max_cells=int(cap))
    unbounded = plan_audit(proto, n_cases=n, n_features=F, engine=engine, n_search=min(n, 200),
                           options=replace(opts, max_cells=10 ** 30))
    quad = G <= qcap
    assert (unbounded.permutation, unbounded.beam) == (quad, quad)
    assert unbounded.shap == quad  # n <= shap_max_cases (300) here
    assert any("AUDIT_MAX_QUADRATIC_GROUPS" in note for note in unbounded.notes) == (not quad)
    assert ("permutation importance" in unbounded.cells) == quad and ("group-SHAP" in unbounded.cells) == quad
    assert unbounded.total >= n * (G + 1) * F  # at least the one-group removals of every case
    if unbounded.total <= int(cap):
        assert plan_audit(proto, n_cases=n, n_features=F, engine=engine, n_search=min(n, 200), options=opts).total \
            == unbounded.total
    else:
        with pytest.raises(AuditInputError) as err:
            plan_audit(proto, n_cases=n, n_features=F, engine=engine, n_search=min(n, 200), options=opts)
        assert err.value.code == "FR_TOO_MUCH_WORK"
        assert f"cap of {int(cap):,} (AUDIT_MAX_FRAGILITY_CELLS)" in err.value.message
        assert f"{n:,} cases × {G:,} evidence groups × {F:,} transformed columns" in err.value.message
