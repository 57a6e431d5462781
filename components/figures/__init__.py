"""Plotly figure builders, one module per audit (``data`` is the Data & groups page).

Pure functions that return a ``plotly.graph_objects.Figure`` from library
results or stored run tables; they never import streamlit, so they can be
tested without a browser, and they work in a notebook as they are: call one on
a result object and the figure shows in Jupyter (or ``fig.show()``). Every
string in a figure is shown as text (:func:`.labels.escape_figure`).

From a notebook
---------------
The examples use the results of :mod:`audit_core.api` (``docs/notebook_example.py``
builds them)::

    from audit_core import TableSpec, fragility_audit, transport_audit
    fr = fragility_audit(frame, spec)                     # FragilityReport
    tr = transport_audit(frame, spec)                     # TransportReport, binary target
    mc = transport_audit(frame, multiclass_spec)          # TransportReport, three or more classes

``tests/test_figures_notebook.py`` runs every line below that starts with ``>>>``
on such results, in order.

:mod:`components.figures.fragility` — certificates (``fr.audit`` is the
:class:`~audit_core.fragility.audit.FragilityAudit`):

>>> from components.figures import fragility as ff
>>> fig = ff.distributions_figure(fr.audit.certificates, k=fr.depth)            # k*, RCMA, FDS histograms
>>> fig = ff.auroc_figure(fr.audit.auroc, label="donor_any", stratum="all")     # brittleness scores by AUROC
>>> fig = ff.delta_heatmap_figure(fr.audit.batch.delta_frame())                 # case × group one-step drops
>>> fig = ff.trajectory_figure(fr.audit.batch.certificate(0))                   # one case's collapse path
>>> fig = ff.degradation_figure(fr.audit.batch.certificate(0))                  # margin against severity
>>> fig = ff.temperature_figure(fr.audit.temperature.table)                     # needs options.temperature=True

``ff.runs_heatmap_figure(overview, value="mean_fds")`` (an overview of saved runs, dataset × model),
``ff.neural_comparison_figure(table)`` (the FR-ResMLP comparison) and
``ff.fragility_report_figures(record)`` (every figure of a saved run, a
:class:`~audit_core.runs.registry.RunRecord`) take saved-run tables.

:mod:`components.figures.transport` — a binary Transport result (``tr.figure_slice()``
gives the headline ``model``, ``mapping`` and ``headline`` keywords):

>>> from components.figures import transport as tf
>>> from audit_core.transport.config import class_names_of
>>> res, names = tr.result, class_names_of(tr.result.manifest["config"])
>>> fig = tf.reliability_figure(res.extras["reliability"], table=res.table, **tr.figure_slice())
>>> fig = tf.risk_selection_figure(res.extras["curves"], res.table, selection_rate=0.8, **tr.figure_slice())
>>> fig = tf.frontier_figure(res.table, class_names=names, **tr.figure_slice())
>>> fig = tf.stress_figure(res.table, **tr.figure_slice())                      # "not run" without stresses
>>> fig = tf.target_definition_figure(res.table)                                # needs extra_targets
>>> fig = tf.heterogeneity_figure(res.table, class_names=names, **tr.figure_slice())

``tf.transport_report_figures(record)`` draws all of them from a saved run.

:mod:`components.figures.transport_mc` — a multi-class Transport result:

>>> from components.figures import transport_mc as tmc
>>> fig = tmc.mc_reliability_figure(mc.result.extras["reliability"], table=mc.result.table, **mc.figure_slice())
>>> fig = tmc.mc_class_conformal_figure(mc.result.table, alpha=0.1, class_names=mc.result.classes,
...                                     **mc.figure_slice())
>>> fig = tmc.mc_risk_selection_figure(mc.result.extras["curves"], mc.result.table, selection_rate=0.8,
...                                    **mc.figure_slice())

``tmc.mc_report_figures(tables, ...)`` draws a saved multi-class run's tables and
``tmc.transport_any_report_figures(record)`` a saved run of either kind.

:mod:`components.figures.shift` — why it moved (a binary result's feature shift):

>>> from components.figures.shift import feature_shift_figure, pooled_domain_auroc
>>> fig = feature_shift_figure(tr.result.extras["feature_shift"], domain_auroc=pooled_domain_auroc(tr.result.extras))

:mod:`components.figures.data` — the table and its evidence groups (``fr.workspace``):

>>> import pandas as pd
>>> from components.figures import data as fd
>>> target = fr.workspace.dataset.primary
>>> fig = fd.group_sizes_figure(fr.workspace.grouping.group_sizes())
>>> fig = fd.class_balance_figure(pd.Series(target.counts, index=target.class_names), title=target.name)

``fd.missingness_figure(columns)`` takes a ``column, missing_share`` table (the Data & groups page's).

:mod:`components.figures.receipts` and :mod:`components.figures.cube` — Receipts:
``cube_view(cube)`` draws a :class:`~audit_core.receipts.cube.CubeResult`
(``audit_core.receipts.cube.execute_cube``): ``cube_figure(cube)`` (flat, ``k ≤ 3``) or
``receipt_matrix_figure(cube)`` (any ``k``); ``baseline_figure(report.to_frame())``,
``reason_debt_figure(grid)`` and ``benchmark_figure(by_mutation)`` draw the
learned baseline, the reason-debt grid and a benchmark; ``receipts_report_figures(record)``
a saved run.
"""
__all__: list[str] = []
