"""The Autograd page (`page`) and its parts."""
