"""Pool sets: the pools of many queries at once (found in files, folders or a Milvus
collection), one row of numbers per query, and the batch work that computes them, in local
processes or on a Dask cluster."""
