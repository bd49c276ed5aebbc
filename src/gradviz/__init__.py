"""gradviz: see what PyTorch's autograd and devices are doing.

Core modules (no Streamlit): lang (parse and check programs), run (interpret them into a
Trace), graph (Trace -> GraphModel), render (GraphModel -> DOT -> svg/png/pdf), presets.
Pages live in gradviz.ui and are the only modules that import streamlit.
"""

__version__ = "0.1.0"
