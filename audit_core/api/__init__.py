"""The library a notebook user holds: declare a table once, run both audits, see the results in Jupyter.

::

    from audit_core import TableSpec, fragility_audit, transport_audit

    spec = TableSpec(target="diagnosis", positive="malignant", key="record_id",
                     domain="site", source_domain="A", target_domain="B")
    fragility = fragility_audit(frame, spec)          # a FragilityReport
    transport = transport_audit(frame, spec)          # a TransportReport

* :class:`TableSpec` — targets, features, evidence groups, domains, weight,
  key and subgroup columns, declared once (:mod:`.spec`);
* :func:`fragility_audit`, :func:`transport_audit` — the two audits, each one
  call; Transport picks the binary or the multi-class protocol from the
  target (:mod:`.run`);
* :class:`FragilityReport`, :class:`TransportReport` — the audits' own result
  objects with their findings, shown in Jupyter through ``_repr_html_``
  (:mod:`.display`).

Tables may be pandas or polars frames. ``docs/notebook_example.py`` is a worked example.
"""
from .display import FragilityReport, TransportReport
from .run import fragility_audit, transport_audit, transport_kind
from .spec import TableSpec

__all__ = ["TableSpec", "fragility_audit", "transport_audit", "transport_kind", "FragilityReport", "TransportReport"]
