"""What the pages and the command line call, without torch: run a program or a gradient
check in the warm pool (programs), ask the host what it offers (host)."""
