"""Embedding and tokens: the packaged MiniLM run with numpy, any local sentence-transformers
folder, and the offline tokenizers that count a text's tokens. Text in, numbers out: it knows
no pool (:mod:`adagres.pools.ready` fills a pool's embeddings and token counts with it).

``adagres.embed`` is also the public module of embeddings: its functions are those of
:mod:`adagres.embed.models`.
"""

from .models import DEFAULT_MODEL, cache_dir, embed_texts, resolve_model

__all__ = ["DEFAULT_MODEL", "cache_dir", "embed_texts", "resolve_model"]
