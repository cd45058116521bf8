"""Shared by the trace tests: a small offline LangChain embedding."""

from __future__ import annotations

import hashlib

from langchain_core.embeddings import Embeddings


class HashEmbeddings(Embeddings):
    """A small offline embedding: 16 values from the sha256 of the words (a text close in
    words is close in vector), enough to give distinct scores and a stable order."""

    def vector(self, text: str) -> list[float]:
        out = [0.0] * 16
        for word in text.lower().split():
            digest = hashlib.sha256(word.strip(".,").encode()).digest()
            for i in range(16):
                out[i] += digest[i] / 255 - 0.5
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)
