"""Streamlit app layer shared by the pages: state and URL (``state``), the sidebar
(``sidebar``), cached data (``data``) and small render helpers (``render``)."""
