"""Plain helpers with no gradviz imports: formatting sizes and durations, timing repeated
calls, Markdown-safe text and tables, byte-bounded caches, how this server is hosted (public
or local), and its settings (every GRADVIZ_* variable and the public/local limits, in one
table)."""
