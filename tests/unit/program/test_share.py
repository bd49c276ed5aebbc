"""gradviz.program.share: share links round-trip, and hostile parameters become messages."""

import base64
import zlib

import pytest

from gradviz.graph.model import DrawOptions
from gradviz.program.share import (
    MAX_PARAM_CHARS,
    THEMES,
    ShareState,
    decode_program,
    encode_program,
    from_params,
    to_params,
)


def test_round_trip_program_and_options():
    program = "x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()  # ünïcode ✓\n"
    state = ShareState(
        program=program,
        drawing=DrawOptions(view="classic", rankdir="LR", theme="print", saved=True),
        theme_follows_page=False,
        backward="y",
        ones=True,
        retain=True,
    )
    back = from_params(to_params(state))
    assert back.program == program
    assert back.drawing == state.drawing and not back.theme_follows_page
    assert back.backward == "y"
    assert back.ones and back.drawing.saved and back.retain
    assert back.problems == []


def test_defaults_are_left_out_of_the_link():
    assert set(to_params(ShareState(program="x = 1"))) == {"p"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("!!!", "not valid base64"),
        ("A" * (MAX_PARAM_CHARS + 1), "limit"),
        (base64.urlsafe_b64encode(b"not zlib").decode(), "damaged"),
        (encode_program("x = torch.ones(3)\n" * 50)[:40], "cut short"),
        (base64.urlsafe_b64encode(zlib.compress(b"\xff\xfe\x00")).decode(), "not UTF-8"),
    ],
)
def test_broken_programs_are_plain_errors(text, needle):
    with pytest.raises(ValueError, match=needle):
        decode_program(text)


def test_zip_bomb_refused_without_inflating_it():
    bomb = base64.urlsafe_b64encode(zlib.compress(b"a" * 5_000_000, 9)).decode()
    assert len(bomb) < MAX_PARAM_CHARS
    with pytest.raises(ValueError, match="larger than the program limit"):
        decode_program(bomb)


def test_bad_options_fall_back_with_messages():
    state = from_params(
        {"view": "<script>", "dir": "BT", "theme": 3, "backward": "__class__.x", "p": "%%%"}
    )
    assert (state.drawing, state.theme_follows_page, state.backward, state.program) == (
        DrawOptions(),
        True,
        None,
        None,
    )
    assert len(state.problems) == 5


def test_round_trip_device_moves_step_and_theme_override():
    state = ShareState(
        program="x = 1",
        moves=("net.0.weight", "w"),
        move_to="cuda:1",
        step=3,
        drawing=DrawOptions(theme="dark"),
        theme_follows_page=False,
    )
    params = to_params(state)
    assert params["move"] == "net.0.weight,w" and params["to"] == "cuda:1"
    back = from_params(params)
    assert (back.moves, back.move_to, back.step, back.drawing.theme) == (
        ("net.0.weight", "w"),
        "cuda:1",
        3,
        "dark",
    )
    assert back.problems == []
    every = from_params(to_params(ShareState(program="x = 1", moves=("*",), move_to="cpu")))
    assert (every.moves, every.move_to) == (("*",), "cpu")


def test_the_default_theme_follows_the_page():
    assert ShareState().theme_follows_page
    assert "theme" not in to_params(ShareState(program="x = 1"))
    assert "theme" not in to_params(ShareState(program="x = 1", drawing=DrawOptions(theme="dark")))
    chosen = ShareState(program="x = 1", theme_follows_page=False)
    assert to_params(chosen)["theme"] == "light"
    assert from_params({"theme": "auto"}).theme_follows_page


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"move": "x", "to": "gpu!"}, "`to`"),
        ({"move": "x;rm", "to": "cuda:0"}, "`move`"),
        ({"move": ",".join(["a"] * 300), "to": "cpu"}, "`move`"),
        ({"move": "x"}, "`to`"),
        ({"step": "-1"}, "`step`"),
        ({"step": "lots"}, "`step`"),
        ({"step": "²"}, "`step`"),  # a digit to str.isdigit, not to int()
    ],
)
def test_hostile_moves_and_steps_are_messages(params, needle):
    state = from_params(params)
    assert state.moves == () and state.move_to is None and state.step == 0
    assert any(needle in p for p in state.problems)


def test_the_lecture_theme_survives_a_share_link():
    from gradviz.graph.dot import THEMES as DRAWN

    lecture = DrawOptions(theme="lecture")
    state = from_params(
        to_params(ShareState(program="x = 1", drawing=lecture, theme_follows_page=False))
    )
    assert state.drawing.theme == "lecture" and not state.problems
    assert set(DRAWN) == set(THEMES) - {"auto"}  # every drawn theme can be shared


CPU_HOST = ["cpu", "cuda:0", "cuda:1"]  # a host without CUDA: two simulated devices


@pytest.mark.parametrize(
    ("devices", "to"),
    [(CPU_HOST, "cuda:7"), (CPU_HOST, "mps"), (["cpu", "cuda:0"], "cuda:1"), (["cpu"], "cuda")],
)
def test_a_device_the_host_does_not_offer_moves_nothing(devices, to):
    state = from_params({"move": "x", "to": to}, devices)
    assert state.moves == () and state.move_to is None
    (problem,) = state.problems
    assert problem.startswith("`to`") and f"`{to}`" in problem and "moving nothing" in problem
    assert ", ".join(devices) in problem  # what the host offers instead


def test_a_device_the_host_offers_is_kept():
    state = from_params({"move": "x", "to": "cuda:1"}, CPU_HOST)
    assert (state.moves, state.move_to, state.problems) == (("x",), "cuda:1", [])


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"ones": "yes"}, "`ones`"),
        ({"saved": "true"}, "`saved`"),
        ({"retain": "1 "}, "`retain`"),
        ({"quiz": "2"}, "`quiz`"),
        ({"to": "cuda:0"}, "`to` needs `move`"),
    ],
)
def test_every_field_says_when_its_value_is_not_used(params, needle):
    state = from_params(params)
    assert not (state.ones or state.drawing.saved or state.retain) and state.moves == ()
    assert len(state.problems) == 1 and needle in state.problems[0]


def test_flags_on_and_off():
    state = from_params({"ones": "1", "saved": "0", "retain": "1", "quiz": "1"})
    assert (state.ones, state.drawing.saved, state.retain, state.problems) == (
        True,
        False,
        True,
        [],
    )
