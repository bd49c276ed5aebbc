"""The Speed page (`page`) and its parts."""
