"""App-side helpers: session state, caching, feedback, widgets and Plotly figure builders.

Figure builders (``components.figures``) are pure functions that return a
``plotly.graph_objects.Figure`` and can be tested without a browser.
"""
