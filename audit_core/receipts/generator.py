"""Seeded, balanced benchmark of revisions with executed (certified) receipts.

Strata
------
* **policy** - typed grounds (``amount``, ``tenure`` numbers; ``role``,
  ``region`` texts; ``filed`` date), 3-4 ordered rules built from templates
  (thresholds, roles, region membership, date arithmetic), a default and
  authority scopes (``true`` or a condition on region/role/amount).
* **logical** - boolean facts ``p0..p7``, Horn-style implications
  ``pa and pb [and pc] -> head`` (one step: a body is a conjunction of
  facts and the head is the verdict ``holds``/``fails``; chained derivation
  is not modelled because the adjudicator is first-fire) and an authority
  mask (``true``/``false`` per rule).

Each independent **unit** (one base world) yields ``cases_per_unit``
revisions. Mutations are ``single`` (one of G, N, A changed), ``multi`` (two
or three parts changed) or ``noop`` (a textual revision with no semantic
effect: a condition rewritten equivalently). Units, not cases, are assigned
to the splits ``train``/``val``/``test``, so no unit leaks across splits.

**Balance.** Random edits mostly leave the verdict alone, which would make
"no change" the majority answer. Every cell (stratum x split) therefore gets
exact counts (:mod:`audit_core.receipts.quota`): the mutation kinds follow
``mutation_mix`` and ``change_share`` of the cell's cases change the
verdict. Candidate mutations are executed and kept only when their outcome
is the case's planned one (rejection kept to quota, with a budget);
``Benchmark.stats`` reports candidates, acceptance rate and time.

Every locked-test case (test split, ``single`` or ``noop``) gets the three
controls of :mod:`audit_core.receipts.controls`. Every case and control is
*certified*: its full cube is executed over the sources ``(G, N, A)``; the
gold is the executed receipt. The controls' executed receipts are checked
against their relations (``Benchmark.control_violations`` must be 0).
"""
from __future__ import annotations

import datetime as _dt
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from audit_core.errors import fail, register_messages
from audit_core.limits import Limits

from .adjudicate import Judge
from .bench_mix import balance_frame, difficulty_frame, family_type
from .controls import add_distractor, permute_sources
from .cube import CubeResult, _run_masks, format_family, inverse_receipt
from .quota import GenerationStats, QuotaPlan, Resisted
from .state import EvaluatorState, Ground, Norms, Rule, state_from_dict
from .state_cube import execute_state_cube

__all__ = ["BenchmarkConfig", "BenchCase", "Benchmark", "GenerationStats", "generate_benchmark", "serialise_case",
           "PARTS"]

PARTS: tuple[str, ...] = ("G", "N", "A")
_ROLES = ("clerk", "manager", "director", "intern")
_REGIONS = ("EU", "US", "APAC", "LATAM")
_VERDICTS = ("deny", "review", "escalate", "approve")
_D0 = _dt.date(2023, 1, 1)


register_messages(
    {
        "RC_BENCH_CONFIG": "The benchmark setting {field} {problem}; got {got!r}.",
    }
)


@dataclass(frozen=True, kw_only=True)
class BenchmarkConfig:
    """Size and mix of a benchmark.

    Parameters
    ----------
    n_cases : int, default 20000
        Base cases (controls come on top).
    seed : int, default 0
    cases_per_unit : int, default 4
    logical_share : float, default 0.5
        Share of units in the logical stratum.
    mutation_mix : tuple (noop, single, multi), default (0.15, 0.50, 0.35)
        Exact shares (to one case) of each cell's cases. No-ops never change
        the verdict: they are the invariance control.
    splits : tuple (train, val, test), default (0.72, 0.10, 0.18)
        Shares of *units*.
    change_share : float or None, default 0.6
        Share of each cell's (stratum x split) cases that change the verdict,
        exact to one case; at most ``1 - noop share``. The changes are split
        between single and multi in proportion to their counts, so with the
        defaults 0.6 / 0.85 = 70.6% of mutated cases change. ``None`` keeps
        the first candidate of every case (the natural, unbalanced mix).
    budget : float, default 50
        Candidate mutations allowed per mutated case, pooled over a cell;
        spending it raises ``RC_BENCH_BUDGET``.
    """

    n_cases: int = 20000
    seed: int = 0
    cases_per_unit: int = 4
    logical_share: float = 0.5
    mutation_mix: tuple[float, float, float] = (0.15, 0.50, 0.35)
    splits: tuple[float, float, float] = (0.72, 0.10, 0.18)
    change_share: float | None = 0.6
    budget: float = 50.0

    def to_dict(self) -> dict[str, Any]:
        return {"n_cases": self.n_cases, "seed": self.seed, "cases_per_unit": self.cases_per_unit,
                "logical_share": self.logical_share, "mutation_mix": list(self.mutation_mix),
                "splits": list(self.splits), "change_share": self.change_share, "budget": self.budget}

    def check(self) -> "BenchmarkConfig":
        """Refuse impossible settings with ``RC_BENCH_CONFIG`` naming the setting; returns ``self``.

        Examples
        --------
        >>> BenchmarkConfig(change_share=0.9).check()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        audit_core.errors.AuditInputError: The benchmark setting change_share must be between 0 and 1 - noop ...; got 0.9.
        """
        def bad(name: str, problem: str, got: Any) -> None:
            raise fail("RC_BENCH_CONFIG", field=name, problem=problem, got=got)

        for name in ("n_cases", "cases_per_unit"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                bad(name, "must be a whole number of at least 1", v)
        Limits.from_env().check_fields("BenchmarkConfig", self, where="BenchmarkConfig")
        for name, v in (("mutation_mix", self.mutation_mix), ("splits", self.splits)):
            if (len(v) != 3 or any(isinstance(x, bool) or not isinstance(x, (int, float)) or not x >= 0 for x in v)
                    or not math.isclose(sum(v), 1.0, abs_tol=1e-9)):
                bad(name, "must be three non-negative shares that sum to 1", tuple(v))
        if not 0 <= self.logical_share <= 1:
            bad("logical_share", "must be between 0 and 1", self.logical_share)
        cap = 1 - self.mutation_mix[0]
        if self.change_share is not None and not 0 <= self.change_share <= cap + 1e-12:
            bad("change_share", f"must be between 0 and 1 - noop share ({cap:.2f}), since no-ops never change "
                "the verdict", self.change_share)
        if not self.budget >= 1:
            bad("budget", "must be at least 1 candidate per mutated case", self.budget)
        return self


@dataclass(frozen=True)
class BenchCase:
    """One certified case (a base revision or a control of one)."""

    case_id: str
    unit_id: str
    stratum: str
    split: str
    mutation: str  # noop | single | multi
    mutated: tuple[str, ...]
    control: str  # "" for base cases
    base_id: str  # own id for base cases
    source_order: tuple[str, ...]
    old: EvaluatorState = field(repr=False)
    new: EvaluatorState = field(repr=False)
    cube: CubeResult = field(repr=False)
    pruned_calls: int = 0
    candidates: int = 0  # candidate mutations drawn before this one was kept (0 for no-ops and controls)

    @property
    def receipt(self):
        return self.cube.receipt

    @property
    def family(self) -> str:
        """Receipt-family type: ``none``, ``single``, ``alternatives`` or ``joint``."""
        return family_type(self.cube.receipt)

    @property
    def text(self) -> str:
        return serialise_case(self.old, self.new, order=self.source_order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id, "unit_id": self.unit_id, "stratum": self.stratum, "split": self.split,
            "mutation": self.mutation, "mutated": "".join(self.mutated), "control": self.control,
            "base_id": self.base_id, "source_order": "".join(self.source_order),
            "v_old": self.cube.v_old, "v_new": self.cube.v_new, "changed": self.cube.changed,
            "receipt": format_family(self.cube.receipt, PARTS), "family": self.family,
            "calls_full": 2 ** len(PARTS), "calls_pruned": self.pruned_calls, "candidates": self.candidates,
        }


@dataclass(frozen=True)
class Benchmark:
    """A generated, certified benchmark."""

    config: BenchmarkConfig
    cases: tuple[BenchCase, ...]
    control_violations: tuple[str, ...]
    stats: GenerationStats | None = None

    def balance_frame(self) -> pd.DataFrame:
        """Change share per stratum x split beside its quota (:func:`~.bench_mix.balance_frame`)."""
        return balance_frame(self.to_frame(), target=self.config.change_share)

    def difficulty_frame(self) -> pd.DataFrame:
        """Receipt-family mix of the changing cases (:func:`~.bench_mix.difficulty_frame`)."""
        return difficulty_frame(self.to_frame())

    def acceptance_frame(self) -> pd.DataFrame:
        """Candidates and acceptance rate of the mutated cases per stratum x mutation."""
        df = self.to_frame()
        mut = df[(df["control"] == "") & (df["mutation"] != "noop")]
        out = (mut.groupby(["stratum", "mutation"], sort=True)
               .agg(cases=("case_id", "size"), candidates=("candidates", "sum")).reset_index())
        out["acceptance_rate"] = out["cases"] / out["candidates"]
        return out

    def by_id(self) -> dict[str, BenchCase]:
        return {c.case_id: c for c in self.cases}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([c.to_dict() for c in self.cases])

    def select(self, *, split: str | None = None, mutation: tuple[str, ...] | None = None,
               control: str | None = "") -> list[BenchCase]:
        return [c for c in self.cases
                if (split is None or c.split == split)
                and (mutation is None or c.mutation in mutation)
                and (control is None or c.control == control)]


# --------------------------------------------------------------------------
# Serialisation
# --------------------------------------------------------------------------
def _part_text(state: EvaluatorState, part: str) -> str:
    if part == "G":
        return "; ".join(f"{g.name}={'?' if g.value is None else g.value}" for g in state.grounds)
    if part == "N":
        rules = "; ".join(f"{r.id}: if {r.when} then {r.then}" for r in state.norms.rules)
        return f"{rules}; default {state.norms.default}; unknown {state.norms.on_unknown}"
    return "; ".join(f"{rid}: {scope}" for rid, scope in state.authority) or "(none)"


def serialise_case(old: EvaluatorState, new: EvaluatorState, *, order=PARTS) -> str:
    """Text of a revision, one line per source in ``order`` (fixed ``G, N, A`` by default)."""
    return "\n".join(f"[{p}] old: {_part_text(old, p)} || new: {_part_text(new, p)}" for p in order)


# --------------------------------------------------------------------------
# Policy stratum
# --------------------------------------------------------------------------
def _policy_grounds(rng: random.Random) -> dict[str, Any]:
    return {
        "amount": rng.randrange(1, 500) * 100,
        "tenure": rng.randrange(0, 31),
        "role": rng.choice(_ROLES),
        "region": rng.choice(_REGIONS),
        "filed": {"type": "date", "value": (_D0 + _dt.timedelta(days=rng.randrange(730))).isoformat()},
    }


def _policy_condition(rng: random.Random) -> str:
    t = rng.randrange(6)
    if t == 0:
        return f"amount > {rng.randrange(5, 450) * 100}"
    if t == 1:
        return f'role == "{rng.choice(_ROLES)}" and amount > {rng.randrange(5, 300) * 100}'
    if t == 2:
        regs = rng.sample(_REGIONS, 2)
        return f'region in ["{regs[0]}", "{regs[1]}"]'
    if t == 3:
        d = _D0 + _dt.timedelta(days=rng.randrange(730))
        return f'filed >= date("{d.isoformat()}")'
    if t == 4:
        return f'tenure < {rng.randrange(1, 25)} and role != "{rng.choice(_ROLES)}"'
    return f'filed - date("2023-01-01") > {rng.randrange(30, 700)} and amount * 2 > {rng.randrange(10, 900) * 100}'


def _policy_scope(rng: random.Random) -> str:
    t = rng.randrange(5)
    if t <= 1:
        return "true"
    if t == 2:
        return f'region in ["{rng.choice(_REGIONS)}", "{rng.choice(_REGIONS)}"]'
    if t == 3:
        return f'role != "{rng.choice(_ROLES)}"'
    return f"amount < {rng.randrange(50, 500) * 100}"


def _policy_world(rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(3, 5)
    rules = [{"id": f"r{i + 1}", "when": _policy_condition(rng), "then": rng.choice(_VERDICTS[:3])} for i in range(n)]
    return {"grounds": _policy_grounds(rng),
            "norms": {"default": rng.choice(("approve", "review")), "rules": rules},
            "authority": {r["id"]: _policy_scope(rng) for r in rules}}


def _mutate_policy(d: dict[str, Any], part: str, rng: random.Random) -> None:
    if part == "G":
        key = rng.choice(("amount", "tenure", "role", "region", "filed"))
        fresh = _policy_grounds(rng)
        while fresh[key] == d["grounds"][key]:
            fresh = _policy_grounds(rng)
        d["grounds"][key] = fresh[key]
    elif part == "N":
        rules = d["norms"]["rules"]
        t = rng.randrange(5)
        if t == 0 and len(rules) >= 2:
            i = rng.randrange(len(rules) - 1)
            rules[i], rules[i + 1] = rules[i + 1], rules[i]
        elif t == 1:
            r = rng.choice(rules)
            r["then"] = rng.choice([v for v in _VERDICTS[:3] if v != r["then"]])
        elif t == 2:
            d["norms"]["default"] = "review" if d["norms"]["default"] == "approve" else "approve"
        else:
            r = rng.choice(rules)
            new = _policy_condition(rng)
            while new == r["when"]:
                new = _policy_condition(rng)
            r["when"] = new
    else:
        rid = rng.choice([r["id"] for r in d["norms"]["rules"]])
        t = rng.randrange(3)
        if t == 0 and rid in d["authority"]:
            del d["authority"][rid]
        else:
            new = _policy_scope(rng)
            while new == d["authority"].get(rid):
                new = _policy_scope(rng)
            d["authority"][rid] = new


# --------------------------------------------------------------------------
# Logical stratum
# --------------------------------------------------------------------------
_ATOMS = tuple(f"p{i}" for i in range(8))


def _body(rng: random.Random) -> str:
    return " and ".join(sorted(rng.sample(_ATOMS, rng.randrange(1, 4)), key=lambda a: int(a[1:])))


def _logical_world(rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(3, 6)
    rules = [{"id": f"h{i + 1}", "when": _body(rng), "then": rng.choice(("holds", "fails"))} for i in range(n)]
    return {"grounds": {a: rng.random() < 0.5 for a in _ATOMS},
            "norms": {"default": "fails", "rules": rules},
            "authority": {r["id"]: rng.random() < 0.75 for r in rules}}


def _mutate_logical(d: dict[str, Any], part: str, rng: random.Random) -> None:
    if part == "G":
        a = rng.choice(_ATOMS)
        d["grounds"][a] = not d["grounds"][a]
    elif part == "N":
        rules = d["norms"]["rules"]
        t = rng.randrange(4)
        r = rng.choice(rules)
        if t == 0 and len(rules) >= 2:
            i = rng.randrange(len(rules) - 1)
            rules[i], rules[i + 1] = rules[i + 1], rules[i]
        elif t == 1:
            r["then"] = "fails" if r["then"] == "holds" else "holds"
        else:
            atoms = r["when"].split(" and ")
            if len(atoms) > 1 and rng.random() < 0.5:
                atoms.remove(rng.choice(atoms))
            else:
                extra = [a for a in _ATOMS if a not in atoms]
                atoms.append(rng.choice(extra))
            r["when"] = " and ".join(sorted(atoms, key=lambda a: int(a[1:])))
    else:
        rid = rng.choice([r["id"] for r in d["norms"]["rules"]])
        d["authority"][rid] = not d["authority"].get(rid, False)


def _noop(d: dict[str, Any], stratum: str, rng: random.Random) -> None:
    """An equivalent rewrite of one condition (the text changes, the meaning does not)."""
    r = rng.choice(d["norms"]["rules"])
    if stratum == "logical":
        atoms = r["when"].split(" and ")
        r["when"] = " and ".join(reversed(atoms)) if len(atoms) > 1 else f"{atoms[0]} and {atoms[0]}"
    else:
        r["when"] = f"not (not ({r['when']}))"


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------
def _copy(d: dict[str, Any]) -> dict[str, Any]:
    return {"grounds": dict(d["grounds"]),
            "norms": {"default": d["norms"]["default"], "rules": [dict(r) for r in d["norms"]["rules"]]},
            "authority": dict(d["authority"])}


def _fast_ground(name: str, spec: Any) -> Ground:
    if isinstance(spec, dict):  # the policy stratum's {"type": "date", "value": "YYYY-MM-DD"}
        return Ground(name, "date", _dt.date.fromisoformat(spec["value"]))
    if isinstance(spec, bool):
        return Ground(name, "bool", spec)
    return Ground(name, "number" if isinstance(spec, (int, float)) else "text", spec)


def _candidate_state(d: dict[str, Any]) -> EvaluatorState:
    """The state of a generated dict, built without re-validation (tested: equals ``state_from_dict`` of it).

    The generator's templates only write declared grounds and existing rule
    ids, and every base world is validated by :func:`state_from_dict`; a
    mutated state is built here because candidates are many.
    """
    rules = tuple(Rule(r["id"], r["when"], r["then"]) for r in d["norms"]["rules"])
    order = {r.id: i for i, r in enumerate(rules)}
    authority = sorted(((rid, ("true" if s else "false") if isinstance(s, bool) else s)
                        for rid, s in d["authority"].items()), key=lambda p: order[p[0]])
    return EvaluatorState(grounds=tuple(sorted((_fast_ground(k, v) for k, v in d["grounds"].items()),
                                               key=lambda g: g.name)),
                          norms=Norms(rules, d["norms"]["default"]), authority=tuple(authority))


def _certify(old: EvaluatorState, new: EvaluatorState, order: tuple[str, ...],
             judge: Judge | None = None) -> tuple[CubeResult, int]:
    sc = execute_state_cube(old, new, granularity="parts", mode="full", sources=order, judge=judge or Judge())
    cube = sc.cube
    index = {s: i for i, s in enumerate(cube.sources)}
    table = {sum(1 << index[x] for x in s): v for s, v in cube.cells.items()}
    _, _, pruned_calls = _run_masks(len(cube.sources), table.__getitem__, "pruned")
    return cube, pruned_calls


def _steer(plan: QuotaPlan, pos: int, world: dict[str, Any], mutate, rng: random.Random, judge: Judge,
           v_old: str) -> tuple[tuple[str, ...], EvaluatorState, int]:
    """Draw candidate mutations of case ``pos`` until one has the planned outcome; (parts, new state, candidates)."""
    kind = plan.kind(pos)
    tries = 0
    while True:
        new_d = _copy(world)
        parts = (rng.choice(PARTS),) if kind == "single" else tuple(
            sorted(rng.sample(PARTS, rng.choice((2, 3))), key=PARTS.index))
        for p in parts:
            mutate(new_d, p, rng)
        tries += 1
        new = _candidate_state(new_d)
        if plan.consider(pos, judge(new).verdict != v_old, tries):
            return parts, new, tries


def _resolve(config: BenchmarkConfig | None, overrides: dict[str, Any]) -> BenchmarkConfig:
    merged = {**(config or BenchmarkConfig()).to_dict(), **overrides}
    merged["mutation_mix"], merged["splits"] = tuple(merged["mutation_mix"]), tuple(merged["splits"])
    return BenchmarkConfig(**merged).check()


def generate_benchmark(config: BenchmarkConfig | None = None, **overrides: Any) -> Benchmark:
    """Generate and certify a balanced benchmark.

    Parameters
    ----------
    config : BenchmarkConfig, optional
    **overrides
        Fields of :class:`BenchmarkConfig` (e.g. ``n_cases=500, seed=3``).

    Returns
    -------
    Benchmark
        Same config -> identical cases, texts and receipts.

    Raises
    ------
    AuditInputError
        ``RC_BENCH_CONFIG`` for an impossible setting; ``RC_BENCH_BUDGET``
        when a cell's candidate budget is spent before its quota is met.

    Examples
    --------
    >>> b = generate_benchmark(n_cases=40, seed=1)
    >>> len(b.select(control="")), b.control_violations
    (40, ())
    """
    cfg = _resolve(config, overrides)
    t0, c0 = time.perf_counter(), time.process_time()
    rng = random.Random(cfg.seed)
    n_units = -(-cfg.n_cases // cfg.cases_per_unit)
    units = []
    for u in range(n_units):
        stratum = "logical" if rng.random() < cfg.logical_share else "policy"
        units.append((f"{stratum[0]}{u:05d}", stratum))
    order = list(range(n_units))
    random.Random(cfg.seed + 1).shuffle(order)
    n_train = round(cfg.splits[0] * n_units)
    n_val = round(cfg.splits[1] * n_units)
    split_of = {}
    for rank, u in enumerate(order):
        split_of[u] = "train" if rank < n_train else ("val" if rank < n_train + n_val else "test")
    sizes = [min(cfg.cases_per_unit, cfg.n_cases - u * cfg.cases_per_unit) for u in range(n_units)]
    plan = QuotaPlan.build([(units[u][1], split_of[u]) for u in range(n_units) for _ in range(sizes[u])],
                           mutation_mix=cfg.mutation_mix, change_share=cfg.change_share, budget=cfg.budget,
                           seed=cfg.seed)

    cases: list[BenchCase] = []
    violations: list[str] = []
    first = 0  # position of the unit's first case
    redraws = 0
    for u, (unit_id, stratum) in enumerate(units):
        while True:
            world = _logical_world(rng) if stratum == "logical" else _policy_world(rng)
            try:
                made, bad = _unit_cases(plan, first, sizes[u], unit_id, stratum, split_of[u], world, rng)
                break
            except Resisted:
                redraws += 1
        cases += made
        violations += bad
        first += sizes[u]
    accepted = sum(1 for c in cases if not c.control and c.mutation != "noop")
    stats = GenerationStats(sum(plan.tries.values()), accepted, plan.swaps, redraws, time.perf_counter() - t0,
                            time.process_time() - c0)
    return Benchmark(cfg, tuple(cases), tuple(violations), stats)


def _unit_cases(plan: QuotaPlan, first: int, size: int, unit_id: str, stratum: str, split: str,
                world: dict[str, Any], rng: random.Random) -> tuple[list[BenchCase], list[str]]:
    """The certified cases (and locked-test controls) of one unit; raises :class:`Resisted` to redraw its world."""
    mutate = _mutate_logical if stratum == "logical" else _mutate_policy
    judge = Judge()  # one memo per unit: its cases share the old grounds
    old = state_from_dict(world, label=f"old state of unit {unit_id}")
    v_old = judge(old).verdict
    cases: list[BenchCase] = []
    violations: list[str] = []
    for j in range(size):
        pos = first + j
        case_id = f"{unit_id}-{j}"
        kind = plan.kind(pos)
        tries = 0
        if kind == "noop":
            parts: tuple[str, ...] = ()
            new_d = _copy(world)
            _noop(new_d, stratum, rng)
            new = _candidate_state(new_d)
        else:
            parts, new, tries = _steer(plan, pos, world, mutate, rng, judge, v_old)
        cube, pc = _certify(old, new, PARTS, judge)
        plan.check(pos, cube.changed)
        cases.append(BenchCase(case_id, unit_id, stratum, split, kind, parts, "", case_id, PARTS, old, new, cube,
                               pc, tries))
        if split == "test" and kind in ("single", "noop"):
            seed = rng.randrange(2**31)
            perm = permute_sources(PARTS, seed=seed)
            c1, p1 = _certify(old, new, perm, judge)
            cases.append(BenchCase(f"{case_id}~permutation", unit_id, stratum, split, kind, parts,
                                   "permutation", case_id, perm, old, new, c1, p1))
            dold, dnew = add_distractor(old, seed=seed), add_distractor(new, seed=seed)
            c2, p2 = _certify(dold, dnew, PARTS, judge)
            cases.append(BenchCase(f"{case_id}~distractor", unit_id, stratum, split, kind, parts,
                                   "distractor", case_id, PARTS, dold, dnew, c2, p2))
            c3, p3 = _certify(new, old, PARTS, judge)
            cases.append(BenchCase(f"{case_id}~inverse", unit_id, stratum, split, kind, parts,
                                   "inverse", case_id, PARTS, new, old, c3, p3))
            if set(c1.receipt) != set(cube.receipt):
                violations.append(f"{case_id}~permutation")
            if set(c2.receipt) != set(cube.receipt):
                violations.append(f"{case_id}~distractor")
            if set(c3.receipt) != set(inverse_receipt(cube)):
                violations.append(f"{case_id}~inverse")
    return cases, violations
