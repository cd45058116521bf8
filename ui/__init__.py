"""Streamlit app layer shared by the pages, by concern.

- ``state``, ``params``, ``sidebar``: the settings, their address, and the shared controls
  with the page list.
- ``pools``, ``corpora``, ``preparing``, ``jobs``, ``progress``: the pools of this server
  process, where new ones come from, and the background work that loads them.
- ``compute``, ``charts``, ``cache``, ``projection_store``: cached results and figures.
- ``tables``, ``render``, ``text``: frames and small render helpers; the other modules are
  blocks of one page each (``pool_sources``, ``replay``, ``derivation``, ``comparison``…).
"""
