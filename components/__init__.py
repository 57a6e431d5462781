"""App-side helpers of the Streamlit dashboard (caching and session state live here).

* ``figures/`` — Plotly figure builders, one module per audit; pure, no streamlit;
* ``widgets/`` — Streamlit widget helpers, one module per page;
* ``report/`` — the self-contained HTML report of a saved run;
* ``state``, ``feedback``, ``routing``, ``shell`` — session state, error display, page routing, the set-up
  every page does after its heading.
"""
