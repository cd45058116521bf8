"""Pools: the pool model (a query, its retrieved chunks, the numpy views the selector
reads), its validation field by field, where chunks sit in their sources, and the file
formats (:mod:`adagres.pools.formats`) behind :mod:`adagres.pools.io` (built on the core)."""
