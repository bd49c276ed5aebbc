"""Plain helpers with no gradviz imports: formatting, Markdown-safe text and tables,
byte-bounded caches, and how this server is hosted (public or local)."""
