"""Seeded benchmark of revisions with executed (certified) receipts.

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

Every locked-test case (test split, ``single`` or ``noop``) gets the three
controls of :mod:`audit_core.receipts.controls`. Every case and control is
*certified*: its full cube is executed over the sources ``(G, N, A)``; the
gold is the executed receipt. The controls' executed receipts are checked
against their relations (``Benchmark.control_violations`` must be 0).
"""
from __future__ import annotations

import datetime as _dt
import random
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .adjudicate import Judge
from .controls import add_distractor, permute_sources
from .cube import CubeResult, _run_masks, format_family, inverse_receipt
from .state import EvaluatorState, state_from_dict
from .state_cube import execute_state_cube

__all__ = ["BenchmarkConfig", "BenchCase", "Benchmark", "generate_benchmark", "serialise_case", "PARTS"]

PARTS: tuple[str, ...] = ("G", "N", "A")
_ROLES = ("clerk", "manager", "director", "intern")
_REGIONS = ("EU", "US", "APAC", "LATAM")
_VERDICTS = ("deny", "review", "escalate", "approve")
_D0 = _dt.date(2023, 1, 1)


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
    mutation_mix : tuple (noop, single, multi), default (0.2, 0.45, 0.35)
    splits : tuple (train, val, test), default (0.72, 0.10, 0.18)
        Shares of *units*.
    change_share : float, default 0.6
        Target share of verdict changes among ``single``/``multi`` cases: a
        mutation is redrawn (at most 8 times) until its endpoints agree or
        differ as drawn. Without it most random edits are inert (about 85%
        no-change), which would make "predict no change" a strong baseline.
    """

    n_cases: int = 20000
    seed: int = 0
    cases_per_unit: int = 4
    logical_share: float = 0.5
    mutation_mix: tuple[float, float, float] = (0.2, 0.45, 0.35)
    splits: tuple[float, float, float] = (0.72, 0.10, 0.18)
    change_share: float = 0.6

    def to_dict(self) -> dict[str, Any]:
        return {"n_cases": self.n_cases, "seed": self.seed, "cases_per_unit": self.cases_per_unit,
                "logical_share": self.logical_share, "mutation_mix": list(self.mutation_mix),
                "splits": list(self.splits), "change_share": self.change_share}


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

    @property
    def receipt(self):
        return self.cube.receipt

    @property
    def text(self) -> str:
        return serialise_case(self.old, self.new, order=self.source_order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id, "unit_id": self.unit_id, "stratum": self.stratum, "split": self.split,
            "mutation": self.mutation, "mutated": "".join(self.mutated), "control": self.control,
            "base_id": self.base_id, "source_order": "".join(self.source_order),
            "v_old": self.cube.v_old, "v_new": self.cube.v_new, "changed": self.cube.changed,
            "receipt": format_family(self.cube.receipt, PARTS),
            "calls_full": 2 ** len(PARTS), "calls_pruned": self.pruned_calls,
        }


@dataclass(frozen=True)
class Benchmark:
    """A generated, certified benchmark."""

    config: BenchmarkConfig
    cases: tuple[BenchCase, ...]
    control_violations: tuple[str, ...]

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


def _certify(old: EvaluatorState, new: EvaluatorState, order: tuple[str, ...]) -> tuple[CubeResult, int]:
    sc = execute_state_cube(old, new, granularity="parts", mode="full", sources=order, judge=Judge())
    cube = sc.cube
    index = {s: i for i, s in enumerate(cube.sources)}
    table = {sum(1 << index[x] for x in s): v for s, v in cube.cells.items()}
    _, _, pruned_calls = _run_masks(len(cube.sources), table.__getitem__, "pruned")
    return cube, pruned_calls


def generate_benchmark(config: BenchmarkConfig | None = None, **overrides: Any) -> Benchmark:
    """Generate and certify a benchmark.

    Parameters
    ----------
    config : BenchmarkConfig, optional
    **overrides
        Fields of :class:`BenchmarkConfig` (e.g. ``n_cases=500, seed=3``).

    Returns
    -------
    Benchmark
        Same config -> identical cases, texts and receipts.

    Examples
    --------
    >>> b = generate_benchmark(n_cases=40, seed=1)
    >>> len(b.select(control="")), b.control_violations
    (40, ())
    """
    cfg = config or BenchmarkConfig()
    if overrides:
        cfg = BenchmarkConfig(**{**cfg.to_dict(), **overrides,
                                 "mutation_mix": tuple(overrides.get("mutation_mix", cfg.mutation_mix)),
                                 "splits": tuple(overrides.get("splits", cfg.splits))})
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

    cases: list[BenchCase] = []
    violations: list[str] = []
    made = 0
    judge = Judge()
    for u, (unit_id, stratum) in enumerate(units):
        world = _logical_world(rng) if stratum == "logical" else _policy_world(rng)
        mutate = _mutate_logical if stratum == "logical" else _mutate_policy
        for j in range(cfg.cases_per_unit):
            if made >= cfg.n_cases:
                break
            made += 1
            case_id = f"{unit_id}-{j}"
            r = rng.random()
            kind = "noop" if r < cfg.mutation_mix[0] else ("single" if r < cfg.mutation_mix[0] + cfg.mutation_mix[1] else "multi")
            old = state_from_dict(world, label=f"old state of {case_id}")
            if kind == "noop":
                parts: tuple[str, ...] = ()
                new_d = _copy(world)
                _noop(new_d, stratum, rng)
                new = state_from_dict(new_d, label=f"new state of {case_id}")
            else:
                want = rng.random() < cfg.change_share
                v_old = judge(old).verdict
                for _attempt in range(8):
                    new_d = _copy(world)
                    parts = (rng.choice(PARTS),) if kind == "single" else tuple(
                        sorted(rng.sample(PARTS, rng.choice((2, 3))), key=PARTS.index))
                    for p in parts:
                        mutate(new_d, p, rng)
                    new = state_from_dict(new_d, label=f"new state of {case_id}")
                    if (judge(new).verdict != v_old) == want:
                        break
            cube, pc = _certify(old, new, PARTS)
            split = split_of[u]
            base = BenchCase(case_id, unit_id, stratum, split, kind, parts, "", case_id, PARTS, old, new, cube, pc)
            cases.append(base)
            if split == "test" and kind in ("single", "noop"):
                seed = rng.randrange(2**31)
                perm = permute_sources(PARTS, seed=seed)
                c1, p1 = _certify(old, new, perm)
                cases.append(BenchCase(f"{case_id}~permutation", unit_id, stratum, split, kind, parts,
                                       "permutation", case_id, perm, old, new, c1, p1))
                dold, dnew = add_distractor(old, seed=seed), add_distractor(new, seed=seed)
                c2, p2 = _certify(dold, dnew, PARTS)
                cases.append(BenchCase(f"{case_id}~distractor", unit_id, stratum, split, kind, parts,
                                       "distractor", case_id, PARTS, dold, dnew, c2, p2))
                c3, p3 = _certify(new, old, PARTS)
                cases.append(BenchCase(f"{case_id}~inverse", unit_id, stratum, split, kind, parts,
                                       "inverse", case_id, PARTS, new, old, c3, p3))
                if set(c1.receipt) != set(cube.receipt):
                    violations.append(f"{case_id}~permutation")
                if set(c2.receipt) != set(cube.receipt):
                    violations.append(f"{case_id}~distractor")
                if set(c3.receipt) != set(inverse_receipt(cube)):
                    violations.append(f"{case_id}~inverse")
    return Benchmark(cfg, tuple(cases), tuple(violations))
