"""Streamlit app layer shared by the pages, by concern.

- ``state``: the app's settings (one frozen value holding the core's ``adagres.Settings``),
  session state and the address (``params``: the settings' query-string form); ``sidebar``:
  the shared controls.
- ``pools``: the pools of this server process and which session may open each (uploads
  and built pools are the session's own); ``corpora``: where new pools come from, each
  load a ``jobs`` job (a daemon thread with progress, an estimate and Cancel);
  ``preparing``: token counts, embeddings and the model's background load, for both;
  ``compute``: cached computations keyed by the settings value (``selection_key``);
  ``charts``: cached figures;
  ``projection_store``: the map's coordinates (PCA now, UMAP in the background);
  ``cache``: the slot every cached result is kept in; ``progress``: the one way the data
  layer draws while it works.
- ``tables``: pandas frames; ``render``, ``text``:
  small render helpers; ``pool_sources``,
  ``replay``, ``derivation``, ``comparison``: blocks of the Pool, Selection, λ and Compare
  pages.
"""
