"""Pools in and out: the pool model, file formats, embeddings, token counts, corpus mode
and the real corpora the data packages carry (built on the core, below the figures)."""
