"""Vector stores: Milvus, embedded (Milvus Lite) and server, to index documents and retrieve
live pools, with the lock files that keep one embedded store per process."""
