"""gradviz.graph.model.DrawOptions: the one set of drawing options, its defaults, its checks,
its variations, and where it comes from (a share link, the command line, the library)."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import replace

import pytest

from gradviz.graph.dot import THEMES, to_dot
from gradviz.graph.model import (
    COLORS,
    DEFAULT_DRAWING,
    RANKDIRS,
    THEME_NAMES,
    VIEWS,
    DrawOptions,
    GraphModel,
)
from gradviz.program.share import ShareState, from_params, to_params


def test_defaults_are_the_drawing_everyone_gets_unasked():
    assert DrawOptions() == DEFAULT_DRAWING
    assert dataclasses.asdict(DEFAULT_DRAWING) == {
        "view": "values",
        "rankdir": "TB",
        "theme": "light",
        "saved": False,
        "legend": True,
        "color": "role",
        "module_depth": None,
        "collapse_depth": None,
    }


def test_every_theme_name_is_a_drawn_theme_in_order():
    assert tuple(THEMES) == THEME_NAMES


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"view": "fancy"}, "unknown view 'fancy'; choose one of values, classic"),
        ({"rankdir": "BT"}, "unknown direction 'BT'; choose one of TB, LR"),
        ({"theme": "auto"}, "unknown theme 'auto'; choose one of light, dark, print, lecture"),
        ({"color": "red"}, "unknown color 'red'; choose one of role, device, grad"),
        ({"theme": None}, "unknown theme None"),
        ({"saved": 1}, "saved must be True or False, not 1"),
        ({"legend": "no"}, "legend must be True or False, not 'no'"),
        ({"module_depth": -1}, "module_depth must be a whole number, 0 or more"),
        ({"module_depth": True}, "module_depth must be a whole number"),
        ({"module_depth": 1.5}, "module_depth must be a whole number"),
        ({"collapse_depth": -2}, "collapse_depth must be a whole number"),
        ({"collapse_depth": "2"}, "collapse_depth must be a whole number"),
    ],
)
def test_a_value_not_offered_is_refused_saying_what_to_choose(fields, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        DrawOptions(**fields)


def test_the_checks_go_view_color_direction_theme():
    # the library's order: a call with several bad values hears of the first
    with pytest.raises(ValueError, match="unknown view"):
        DrawOptions(view="x", theme="y", color="z")
    with pytest.raises(ValueError, match="unknown color"):
        DrawOptions(rankdir="x", color="z")


@pytest.mark.parametrize(
    "fields",
    [
        {"view": v, "rankdir": r, "theme": t, "color": c}
        for v in VIEWS
        for r in RANKDIRS
        for t in THEME_NAMES
        for c in COLORS
    ][::7]
    + [{"module_depth": 0}, {"module_depth": 6}, {"collapse_depth": False}]
    + [{"collapse_depth": True}, {"collapse_depth": 0}, {"collapse_depth": 3}],
)
def test_every_value_offered_is_taken(fields):
    options = DrawOptions(**fields)
    assert all(getattr(options, k) == v for k, v in fields.items())


def test_frozen_and_varied_with_replace():
    options = DrawOptions(theme="dark", saved=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.theme = "light"  # type: ignore[misc]
    flat = replace(options, legend=False)
    assert (flat.theme, flat.saved, flat.legend) == ("dark", True, False)
    assert options.legend  # the original is unchanged
    with pytest.raises(ValueError, match="unknown direction"):
        replace(options, rankdir="RL")  # a variation is checked too
    assert hash(options) == hash(DrawOptions(theme="dark", saved=True))  # usable as a key


def test_the_writer_follows_the_options():
    empty = GraphModel()
    assert "rankdir=LR" in to_dot(empty, DrawOptions(rankdir="LR"))
    assert f'bgcolor="{THEMES["dark"].bg}"' in to_dot(empty, DrawOptions(theme="dark"))
    assert to_dot(empty) == to_dot(empty, DEFAULT_DRAWING)


# ---------------------------------------------------------------- share links


def test_a_share_link_becomes_draw_options():
    state = from_params({"view": "classic", "dir": "LR", "theme": "print", "saved": "1"})
    assert state.drawing == DrawOptions(view="classic", rankdir="LR", theme="print", saved=True)
    assert not state.theme_follows_page and state.problems == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"view": "fancy"}, "`view` must be one of values, classic; using values"),
        ({"dir": "BT"}, "`dir` must be one of TB, LR; using TB"),
        ({"theme": "neon"}, "`theme` must be one of auto, light, dark, print, lecture; using auto"),
        ({"saved": "yes"}, "`saved` must be 1 (on) or 0 (off); using off"),
        ({"view": ["values"]}, "`view` must be one of values, classic; using values"),
        ({"dir": None}, None),  # a key without a value: the default, nothing to say
    ],
)
def test_a_bad_share_link_field_gives_the_default_and_a_plain_message(params, message):
    state = from_params(params)
    assert state.drawing == DEFAULT_DRAWING and state.theme_follows_page
    assert state.problems == ([message] if message else [])


def test_a_share_link_round_trips_its_draw_options():
    for drawing in (
        DrawOptions(view="classic"),
        DrawOptions(rankdir="LR", saved=True),
        DrawOptions(theme="lecture"),
    ):
        state = ShareState(program="x = 1", drawing=drawing, theme_follows_page=False)
        back = from_params(to_params(state))
        assert back.drawing == drawing and back.problems == []
    # fields a link does not carry are left at their defaults
    deep = ShareState(program="x = 1", drawing=DrawOptions(color="grad", module_depth=1))
    assert to_params(deep) == {"p": to_params(ShareState(program="x = 1"))["p"]}


# ---------------------------------------------------------------- the command line


def test_the_command_line_builds_draw_options():
    from gradviz.cli.render import drawing_options, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(
        ["render", "p.py", "-o", "g.svg", "--rankdir", "LR", "--theme", "dark", "--saved"]
        + ["--no-legend", "--color", "device", "--module-depth", "2", "--view", "classic"]
    )
    assert drawing_options(args) == DrawOptions(
        view="classic",
        rankdir="LR",
        theme="dark",
        saved=True,
        legend=False,
        color="device",
        module_depth=2,
    )
    plain = parser.parse_args(["render", "p.py", "-o", "g.svg"])
    assert drawing_options(plain) == DEFAULT_DRAWING
