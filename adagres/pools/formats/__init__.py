"""Pool file formats: which format a file is, canonical JSON and JSON Lines, CSV and Parquet
tables, and the shapes frameworks already dump (read by :mod:`adagres.pools.io`)."""
