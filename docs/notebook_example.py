# %% [markdown]
# # Fragility and Transport from a notebook
#
# Both audits on the bundled breast-cancer sample, from one table declaration.
# Open this file in Jupyter (jupytext reads the `# %%` cells) or run it with
# `python docs/notebook_example.py` from the project root.
#
# The sample has no domains, so the example makes one: records with a mean
# texture above the median form the target domain "B" (a covariate shift by
# construction). Settings are small so the whole file runs in seconds: 60
# certified cases, 50 bootstrap resamples, 5 stressor draws, 3 refits, no
# Transport stresses. The audits' defaults (300 cases, 200 / 500 resamples,
# 10 refits, both stresses) are what a real audit should use.

# %%
import numpy as np

from audit_core import TableSpec, fragility_audit, load_sample, transport_audit
from audit_core.fragility.audit import AuditOptions

frame, info = load_sample("breast_cancer")
frame["site"] = np.where(frame["mean texture"] > frame["mean texture"].median(), "B", "A")

# %% Declare the table once: target, evidence groups, domains, key.
spec = TableSpec(target="diagnosis", positive="malignant", groups=info.evidence_groups, key="record_id",
                 domain="site", source_domain="A", target_domain="B", name="breast cancer")

# %% Fragility: how many evidence groups must fail before a confident prediction changes.
fragility = fragility_audit(frame, spec, options=AuditOptions(max_cases=60, n_boot=50, stress_draws=5,
                                                              perm_repeats=1, shap_max_cases=0, search_max_cases=20))
fragility  # noqa: B018 - in Jupyter: the findings, the certificate table and how to draw the figures

# %% Transport: do probabilities, thresholds and conformal sets keep their meaning on domain B?
transport = transport_audit(frame, spec, n_refits=3, n_bootstrap=50, options={"stresses": ()})
transport  # noqa: B018 - in Jupyter: the findings, the verdict table and how to draw the figures

# %% The same objects hold every table, and the figure builders take them directly.
print(fragility.certificate_table().head())
print(transport.verdict_table()[["metric", "delta", "ci_low", "ci_high", "verdict"]].head())
for finding in fragility.findings + transport.findings:
    print("-", finding.text)

# %% A figure (needs plotly, as the dashboard does).
from components.figures.transport import reliability_figure

figure = reliability_figure(transport.result.extras["reliability"], table=transport.result.table,
                            **transport.figure_slice())
