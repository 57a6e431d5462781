"""Streamlit widget helpers, one module per page (``pages/<page>.py`` calls ``components.widgets.<page>``)."""
__all__: list[str] = []
