"""gradviz.program.share: share links round-trip, and hostile parameters become messages."""

import base64
import zlib

import pytest

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
        view="classic",
        rankdir="LR",
        theme="print",
        backward="y",
        ones=True,
        saved=True,
        retain=True,
    )
    back = from_params(to_params(state))
    assert back.program == program
    assert (back.view, back.rankdir, back.theme, back.backward) == ("classic", "LR", "print", "y")
    assert back.ones and back.saved and back.retain
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
    assert (state.view, state.rankdir, state.theme, state.backward, state.program) == (
        "values",
        "TB",
        "light",
        None,
        None,
    )
    assert len(state.problems) == 5


def test_the_lecture_theme_survives_a_share_link():
    from gradviz.graph.render import THEMES as DRAWN

    state = from_params(to_params(ShareState(program="x = 1", theme="lecture")))
    assert state.theme == "lecture" and not state.problems
    assert set(DRAWN) == set(THEMES)  # every drawn theme can be shared
