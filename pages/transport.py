"""Transport: do probabilities, abstention thresholds and conformal sets keep their meaning on the target domain?"""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Transport")
st.caption("The model may still rank well on the new domain — but do its probabilities, abstention thresholds and "
           "conformal sets still mean what they meant on the source? **Binary targets only** get the stresses, "
           "heterogeneity and feature shift; a class target without a positive class runs multi-class Transport.")
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from audit_core.transport.config import class_names_of
from components.feedback import md_escape, stale_notice
from components.figures import transport as tf
from components.glossary import symbols_expander, table as show_table
from components.state import PERSIST, Keys, current_provenance, get
from components.widgets import forecast as fw
from components.widgets import transport as tw
from components.widgets import transport_mc as tmc
from components.widgets.findings import transport_panel
from components.widgets.shift import shift_tab
from components.widgets.data import current_config

table, columns = get(Keys.TABLE), get(Keys.COLUMNS)
if table is None or columns is None or not get(Keys.TARGETS):
    st.info("Set up Data & groups first: a table and at least one binary target definition.")
    st.page_link("pages/data_groups.py", label="Go to Data & groups", icon=":material/table_chart:")
    st.stop()

ds_config, _ = current_config(table, columns)
tw.sync_with_declaration()
decl = tw.declaration_section(table.frame, ds_config, get(Keys.SAMPLE))
decl = fw.label_mode_section(table.frame, ds_config, decl)  # labels available now, or a forecast before they arrive
forecast = decl["target_labels"] != "available"
multiclass = tmc.is_multiclass_choice(ds_config, decl)  # a class target without a positive class
tolerances = tw.tolerance_section(multiclass=multiclass)
ws = get(Keys.WORKSPACE)
scores = tw.scores_choice(table.frame)  # "I have predictions, not a model": the probability columns
options, fixed = tw.setup_form(ws, scores=scores, forecast=forecast)
if multiclass:  # the same flow; the notes say what the multi-class run does
    tmc.setup_note(options["mappings"])
tw.run_section(table, ds_config, decl, options, tolerances, fixed,
               fixed_target=ws.dataset.primary.name if fixed is not None else None)

result = tw.RESULT_SLOT.value
if result is None:
    st.stop()
changed = tw.RESULT_SLOT.changed(current_provenance())
if changed:
    stale_notice(tw.RESULT_SLOT.what, tw.RESULT_SLOT.provenance.describe(changed))
if tw.RESULT_SLOT.note:
    st.info(tw.RESULT_SLOT.note, icon=":material/update:")

cfg = result.manifest["config"]
names = class_names_of(cfg)  # the declared classes, said in the figures
headline = tw.headline_of(result)
if tw.RESULT_SLOT.run_id and not changed:
    st.success(f"Saved to the registry as run {md_escape(tw.RESULT_SLOT.run_id)}.", icon=":material/check_circle:")
st.info(tw.model_note(result), icon=":material/model_training:")
model, mapping, s_rate = tw.view_selectors(result, headline)
for weak in result.manifest.get("warnings") or ():  # short partitions, a stress that could not run
    st.warning(md_escape(weak["message"]), icon=":material/warning:")
if fw.is_forecast(result):  # before the labels arrive: the forecast, its assumptions and checks
    fw.results_view(result, model=model, mapping=mapping, selection_rate=s_rate, stale=bool(changed),
                    downloads=tw.downloads)
    st.stop()
transport_panel(result, selection_rate=s_rate)
if result.manifest.get("multiclass"):  # its own tabs: only those with content
    tmc.results_view(result, model=model, mapping=mapping, selection_rate=s_rate, stale=bool(changed), headline=headline)
    st.stop()

tabs = st.tabs(["ID vs OOD", "Calibration", "Selective", "Conformal", "Stress", "Target definitions", "Heterogeneity",
                "Downloads", "Why it moved"])
weighting = headline.weighting if headline is not None else "unweighted"
with tabs[0]:
    st.caption(tw.slice_caption(model, mapping, headline, "means and SD over refits; changes paired over refits"))
    idood = tw.id_ood_table(result.table, model=model, mapping=mapping, weighting=weighting)
    show_table(idood, key="view_tr_idood", hide_index=True)
    show_table(tw.verdict_table(result.verdicts, model=model, mapping=mapping, weighting=weighting),
               key="view_tr_verdicts", hide_index=True)
    symbols_expander(idood["metric"], key="view_tr_symbols")
with tabs[1]:
    st.plotly_chart(tf.reliability_figure(result.extras["reliability"], model=model, mapping=mapping,
                                          table=result.table, headline=headline, smooth=True),
                    key="view_tr_reliability")
with tabs[2]:
    st.plotly_chart(tf.risk_selection_figure(result.extras["curves"], result.table, model=model, mapping=mapping,
                                             selection_rate=s_rate, headline=headline), key="view_tr_risk")
with tabs[3]:
    st.plotly_chart(tf.frontier_figure(result.table, model=model, mapping=mapping, class_names=names,
                                       headline=headline), key="view_tr_frontier")
    show_table(result.extras["conformal_tally"], key="view_tr_tally", hide_index=True)
with tabs[4]:
    st.plotly_chart(tf.stress_figure(result.table, model=model, mapping=mapping, headline=headline,
                                     needs_model=tw.on_scores(result)), key="view_tr_stress")
    harm = tw.harm_table(result.extras.get("degradation_percentiles"), model=model, mapping=mapping)
    if harm is None:
        st.caption("Evidence degradation was not run" + (": needs a model." if tw.on_scores(result) else "."))
    else:
        st.caption("Targeted deletion of the most informative features against random deletions of as many: "
                   "the share of random sets it is more harmful than (50% = no worse than chance; harm follows "
                   "each metric's good direction).")
        show_table(harm, key="view_tr_harm", hide_index=True)
with tabs[5]:
    st.plotly_chart(tf.target_definition_figure(result.table, needs_model=tw.on_scores(result)),
                    key="view_tr_targets")
with tabs[6]:
    st.plotly_chart(tf.heterogeneity_figure(result.table, model=model, mapping=mapping,
                                            class_names=names, headline=headline), key="view_tr_hetero")
with tabs[7]:
    tw.downloads(result, stale=bool(changed))
with tabs[8]:
    shift_tab(result.extras)
