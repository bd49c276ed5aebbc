"""What the pages and the command line call, without torch: run a program or a gradient
check in the warm pool (programs), ask the host what it offers (host), run a heavy job (jobs)
and follow it across a page's script runs (following), keep results and drawings for every
session (cache)."""
