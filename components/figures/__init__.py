"""Plotly figure builders, one module per audit (``data`` is the Data & groups page).

Pure functions that return a ``plotly.graph_objects.Figure`` from library
results or stored run tables; they never import streamlit, so they can be
tested without a browser.
"""
__all__: list[str] = []
