"""gradviz as a library: the graph of any PyTorch code, with names, values, gradients,
devices and layers, drawn by the app's own graph model and renderer (`gradviz.draw`,
`gradviz.record` in gradviz/__init__.py; docs/library.md)."""
