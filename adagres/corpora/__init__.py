"""Pools made from documents: corpus mode (chunk documents the way RAG pipelines do, embed,
retrieve a pool) and the real corpora the data packages carry (above embedding)."""
