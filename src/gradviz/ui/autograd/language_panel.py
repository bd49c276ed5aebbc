"""The Autograd page's "What can I write?" panel: the program language, listed from its own
tables: the statements and expressions the checker allows (syntax.grammar), what a program
may import, the context managers and exceptions, and the names of each allow-list
(syntax.vocabulary, the tables' torch-free copy)."""

from __future__ import annotations

import ast

import streamlit as st

from gradviz.program.syntax import grammar, vocabulary
from gradviz.util.mdtext import code

LABEL = "What can I write?"
PANEL_HEIGHT = 360  # pixels; the list scrolls inside


def _names(names) -> str:
    return ", ".join(code(n) for n in names)


def _kinds(base: type) -> list[str]:
    """The allowed node types of one kind (statements, expressions), by their `ast` names."""
    return sorted(n.__name__ for n in grammar.ALLOWED_NODES if issubclass(n, base))


def panel() -> None:
    with st.expander(LABEL, icon=":material/menu_book:"):
        st.caption(
            "A safe subset of Python and PyTorch: anything not listed here is refused with "
            "its line and a plain reason."
        )
        parts = [
            ("Statements (`ast` node types)", _kinds(ast.stmt)),
            ("Expressions (`ast` node types)", _kinds(ast.expr)),
            ("Imports", grammar.IMPORTABLE),
            (
                "Context managers (`with torch.…():`)",
                [*grammar.CONTEXT_MANAGERS, grammar.ANOMALY_MANAGER.removeprefix("torch.")],
            ),
            ("Exceptions to raise and catch", grammar.RAISABLE),
            (
                "Decorators",
                ["@torch.no_grad()", "@torch.enable_grad()"]
                + [f"@{d}" for d in grammar.METHOD_DECORATORS + grammar.CLASS_DECORATORS],
            ),
            ("A class's `__…__` methods", grammar.DUNDER_METHODS),
        ]
        parts += [(title, names.split()) for title, names in vocabulary.GROUPS.items()]
        with st.container(height=PANEL_HEIGHT):  # the controls under it stay near
            st.markdown("\n".join(f"- **{title}**: {_names(names)}" for title, names in parts))
