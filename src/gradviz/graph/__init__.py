"""The autograd graph as plain data (model), built from a run (build, walk), and drawn as
DOT and svg/png/pdf (render)."""
