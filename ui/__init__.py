"""Streamlit app layer shared by the pages, by concern.

- ``state``, ``params``, ``nav``, ``sidebar``: the settings, their address, the page list
  and the shared controls.
- ``pools``, ``corpora``, ``preparing``, ``jobs``, ``progress``: the pools of this server
  process, where new ones come from, and the background work that loads them.
- ``compute``, ``charts``, ``cache``, ``projection_store``: cached results and figures.
- ``tables``, ``render``, ``text``: frames and small render helpers; the other modules are
  blocks of one page each (``pool_sources``, ``replay``, ``derivation``, ``comparison``…).
"""
