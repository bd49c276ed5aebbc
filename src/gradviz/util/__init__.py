"""Plain helpers with no gradviz imports: formatting sizes and durations, timing repeated
calls, Markdown-safe text and tables, byte-bounded caches, and how this server is hosted
(public or local)."""
