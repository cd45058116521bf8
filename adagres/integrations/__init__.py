"""Drop-in AdaGReS for the frameworks pipelines run: one module per framework.

- :mod:`adagres.integrations.langchain`: ``AdagresCompressor`` (a document compressor for
  ``ContextualCompressionRetriever``) and ``AdagresRetriever`` (wraps any retriever);
- :mod:`adagres.integrations.llamaindex`: ``AdagresPostprocessor`` (a node postprocessor);
- :mod:`adagres.integrations.haystack`: ``AdagresSelector`` (a pipeline component).

Each module imports its framework when it is imported, so only the module a pipeline uses
needs its framework installed (``pip install adagres-explorer[langchain]`` and so on);
this package and :mod:`adagres.integrations.common` import none. Every adapter selects with
exactly :func:`adagres.core.baselines.run_prepared` on the embeddings, token counts and
settings it was handed, the documents placed in their sources for overlap-aware packing
(see :mod:`adagres.integrations.common` and :mod:`adagres.integrations.passages`).
"""
