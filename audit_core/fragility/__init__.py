"""Fragility audit: Counterfactual Fragility Certificates (SPEC §1).

Pure library: imports neither streamlit nor plotly. Public surface:

* operators — :func:`remove`, :func:`degrade`, :data:`FAMILIES`;
* certificates — :class:`FragilityConfig`, :func:`certify`,
  :class:`CertificateBatch`, :class:`Certificate`, :class:`CertificateSettings`,
  :func:`verify`;
* search — :func:`exact_min_flip`, :func:`beam_min_flip`, :func:`compare_search`;
* brittle-case evaluation, baseline sensitivity, temperature, and the
  optional FR-ResMLP (``audit_core.fragility.neural``, needs torch).
"""
from .certificate import Certificate, CertificateBatch, CertificateSettings
from .engine import FragilityConfig, as_predict, certify, column_scale
from .operators import FAMILIES, STOCHASTIC, degrade, draw_uniforms, group_mask, remove
from .search import SearchResult, SearchSummary, beam_min_flip, compare_search, exact_min_flip
from .verify import VerificationReport, verify

__all__ = [
    "FAMILIES",
    "STOCHASTIC",
    "remove",
    "degrade",
    "draw_uniforms",
    "group_mask",
    "FragilityConfig",
    "certify",
    "as_predict",
    "column_scale",
    "CertificateSettings",
    "Certificate",
    "CertificateBatch",
    "VerificationReport",
    "verify",
    "SearchResult",
    "SearchSummary",
    "exact_min_flip",
    "beam_min_flip",
    "compare_search",
]
