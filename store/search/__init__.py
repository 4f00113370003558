"""Search: tokens, BM25, the optional vector signal, and their fusion."""
