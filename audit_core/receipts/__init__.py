"""Receipts: executed judgment cubes (SPEC §3).

An evaluator state ``I = (G, N, A)`` (typed grounds, ordered norms,
authority scopes) is judged by a deterministic adjudicator. For a revision
``old → new`` the cube executes the hybrids of ``k`` named sources and the
*receipt* is the complete family of inclusion-minimal replacement sets that
reproduce the new verdict. See ``docs/receipts.md``.

The release gate, a Receipts evaluator over saved runs, stands on the run
registry and lives with it: :mod:`audit_core.runs.gate`.

This package is pure: it never imports streamlit or plotly.
"""
from .accounting import (
    Accounting, Consistency, Gold, Prediction, ReasonDebt, account, control_consistency,
    gold_from_benchmark, reason_debt, reason_debt_grid,
)
from .adjudicate import REFER, Adjudication, RuleTrace, adjudicate
from .baseline import (
    TRIVIAL_MODELS, AlwaysNoChangeModel, BaselineReport, MajorityFamilyModel, MajorityReceiptModel, TfidfReceiptModel,
    evaluate_baseline,
)
from .bench_metrics import bootstrap_interval, paper_shape, score_predictions
from .bench_mix import FAMILY_TYPES, balance_frame, difficulty_frame, family_type
from .controls import CONTROLS, add_distractor, cube_controls, invert, pair_relation_holds, permute_sources
from .cube import (
    MAX_SOURCES, CubeResult, execute_cube, format_family, inverse_receipt, minimal_sets_bruteforce, parse_family,
)
from .generator import PARTS, BenchCase, Benchmark, BenchmarkConfig, GenerationStats, generate_benchmark, serialise_case
from .predictions import LineError, PredictionUpload, parse_predictions
from .state import GROUND_TYPES, EvaluatorState, Ground, Norms, Rule, dump_state, load_state, state_from_dict
from .state_cube import StateCube, execute_state_cube, hybrid_state, state_sources

__all__ = [
    # state
    "GROUND_TYPES", "Ground", "Rule", "Norms", "EvaluatorState", "load_state", "state_from_dict", "dump_state",
    # adjudication
    "REFER", "RuleTrace", "Adjudication", "adjudicate",
    # cube
    "MAX_SOURCES", "CubeResult", "StateCube", "execute_cube", "execute_state_cube", "state_sources",
    "hybrid_state", "inverse_receipt", "minimal_sets_bruteforce", "format_family", "parse_family",
    # controls and accounting
    "CONTROLS", "permute_sources", "add_distractor", "invert", "pair_relation_holds", "cube_controls",
    "Gold", "Prediction", "Accounting", "ReasonDebt", "Consistency", "account", "reason_debt",
    "reason_debt_grid", "control_consistency", "gold_from_benchmark",
    # benchmark and learned baseline
    "PARTS", "BenchmarkConfig", "BenchCase", "Benchmark", "generate_benchmark", "serialise_case",
    "GenerationStats", "FAMILY_TYPES", "family_type", "balance_frame", "difficulty_frame",
    "TfidfReceiptModel", "MajorityReceiptModel", "AlwaysNoChangeModel", "MajorityFamilyModel", "TRIVIAL_MODELS",
    "BaselineReport", "evaluate_baseline", "score_predictions", "bootstrap_interval", "paper_shape",
    # uploads
    "LineError", "PredictionUpload", "parse_predictions",
]
