"""`python -m gradviz render PROGRAM.py -o OUT.svg|png|pdf|dot|html [options]`.

Writes the same drawing the page shows: render.draw(...) then render.render_bytes, under
render.CLI_LIMITS (looser than the app's: a lecturer's own machine), or none with --no-limits.
The format comes from the output's suffix; .html is the interactive viewer (one file, no
network: pan, zoom, hover, inspect, collapse, quiz). A program error still gives a drawing of
what exists (exit 1, error on stderr).
Exit codes: 0 written, 1 program error or nothing/no way to draw, 2 usage.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from gradviz.cli.run import UsageError, add_program_options, format_error, run_from_args
from gradviz.graph import interactive, render
from gradviz.graph.model import COLORS, RANKDIRS, THEME_NAMES, VIEWS, DrawOptions, GraphModel
from gradviz.program.results.trace import Trace

HTML = "html"
GIF = "gif"
WALKTHROUGH_FORMATS = ("pdf", GIF)  # gradviz.graph.walkthrough's
SLIDE_FORMATS = ("svg", "png", "pdf")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "render",
        help="draw a program's autograd graph to svg, png, pdf, dot or interactive html",
        description="Draw a program's autograd graph, as the page does. The format comes "
        "from the output file's suffix. Exit codes: 0 written, 1 program error or "
        "nothing to draw, 2 usage.",
    )
    add_program_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="OUT.svg, OUT.png, OUT.pdf, OUT.dot or OUT.html (the interactive viewer)",
    )
    parser.add_argument("--view", choices=VIEWS, default="values")
    parser.add_argument("--rankdir", choices=RANKDIRS, default="TB")
    parser.add_argument("--theme", choices=THEME_NAMES, default="light")
    parser.add_argument("--scale", type=float, default=1.0, help="PNG scale, 0.5 to 4")
    parser.add_argument(
        "--saved", action="store_true", help="show the values backward functions saved"
    )
    parser.add_argument("--no-legend", action="store_true", help="leave out the legend")
    parser.add_argument(
        "--color",
        choices=COLORS,
        default="role",
        help="role: fills as in the legend (borders by device when some tensor is off the "
        "CPU); device: borders by device and the device legend always; grad: each tensor "
        "with a gradient filled by its mean |grad|, light to red on a log scale",
    )
    parser.add_argument(
        "--module-depth",
        type=_depth,
        default=None,
        metavar="N",
        help="draw layers' calls as clusters N deep (0: none; default 6, 1 for a graph over "
        "300 nodes)",
    )
    parser.add_argument(
        "--call",
        metavar="K",
        help="a program that ran backward several times (a training loop): draw backward "
        "call K's graph (1 is the first; the default is the last), or 'all' for every "
        "call's graph together",
    )
    parser.add_argument(
        "--walkthrough",
        action="store_true",
        help="the backward walk-through as frames, one per backward step plus the final "
        "graph: OUT.pdf (a page each) or OUT.gif (animated); needs a backward "
        "(--backward NAME, or the program's own)",
    )
    parser.add_argument(
        "--slide",
        action="store_true",
        help="a 16:9 slide: 1920x1080 px (PNG, SVG) or a 13.333x7.5 in page (PDF), text at "
        "least 18 px; top-down or left-right, whichever fits better; layers folded, then "
        "several slides (OUT-1.png, OUT-2.png, ...; one PDF of pages) when the graph does not "
        "fit; the legend below the graph (--no-legend: none); --rankdir and --module-depth "
        "are chosen to fit",
    )
    parser.add_argument(
        "--no-limits",
        action="store_true",
        help="lift the graph-size, memory and time limits on Graphviz (by default looser "
        "than the app's: 50,000 nodes, 4 GB, 10 minutes)",
    )
    parser.set_defaults(func=main)


def _depth(text: str) -> int:
    try:
        depth = int(text)
    except ValueError:
        depth = -1
    if depth < 0:
        raise argparse.ArgumentTypeError(f"a whole number, 0 or more, not {text!r}")
    return depth


def drawing_options(args: argparse.Namespace) -> DrawOptions:
    """The drawing's options as the command line gives them."""
    return DrawOptions(
        view=args.view,
        rankdir=args.rankdir,
        theme=args.theme,
        saved=args.saved,
        legend=not args.no_legend,
        color=args.color,
        module_depth=args.module_depth,
    )


def output_format(path: str, *, walk: bool = False, slide: bool = False) -> str:
    fmt = Path(path).suffix.lower().lstrip(".")
    if slide:
        if walk or fmt not in SLIDE_FORMATS:
            raise UsageError(f"{path}: --slide writes .svg, .png or .pdf (not with --walkthrough)")
        return fmt
    if walk:
        if fmt not in WALKTHROUGH_FORMATS:
            raise UsageError(f"{path}: --walkthrough writes .pdf or .gif")
        return fmt
    if fmt not in (*render.FORMATS, HTML):
        raise UsageError(
            f"{path}: cannot tell the format from the suffix; use one of "
            + ", ".join("." + f for f in (*render.FORMATS, HTML))
        )
    return fmt


def chosen_call(trace: Trace, call: str | None) -> Trace:
    """The result as --call picks it (says on stderr which call it draws). UsageError for a
    call the result does not hold."""
    calls = trace.calls
    if call is None and calls.count < 2:
        return trace
    if call == "all":
        return trace
    kept = [c.number for c in calls.kept]
    try:
        number = None if call is None else int(call)
    except ValueError:
        raise UsageError(f"--call takes a call's number or 'all', not {call!r}") from None
    chosen = calls.call(number)
    if chosen is None:
        have = ", ".join(map(str, kept)) or "none"
        raise UsageError(
            f"--call {call}: the program ran backward {calls.count:,} time(s); the calls "
            f"kept are {have} (or 'all')"
        )
    print(f"gradviz render: drawing {chosen.title(calls.count)}", file=sys.stderr)
    return trace.at_call(chosen.number) if calls.count > 1 else trace


def main(args: argparse.Namespace) -> int:
    try:
        fmt = output_format(args.output, walk=args.walkthrough, slide=args.slide)
        trace = run_from_args(args)
    except UsageError as exc:
        print(f"gradviz render: {exc}", file=sys.stderr)
        return 2
    status = 0
    if trace.error:
        print(format_error(args.program, trace.error), file=sys.stderr)
        status = 1
    try:
        trace = chosen_call(trace, args.call)
    except UsageError as exc:
        print(f"gradviz render: {exc}", file=sys.stderr)
        return 2
    options = drawing_options(args)
    if args.walkthrough:
        return _write_walkthrough(args, trace, fmt, options) or status
    if args.slide:
        return _write_slides(args, trace, fmt, options) or status
    if fmt == HTML:  # the viewer draws its own legend
        options = replace(options, legend=False)
    dot = render.draw(trace, options)
    if dot is None:
        print(
            "gradviz render: the classic view has nothing to draw: no tensor in this program "
            "requires grad (create one with requires_grad=True), or use --view values",
            file=sys.stderr,
        )
        return 1
    try:
        limits = render.NO_LIMITS if args.no_limits else render.CLI_LIMITS
        if fmt == HTML:
            data = viewer_bytes(trace, dot, options, limits)
        else:
            data = render.render_bytes(dot, fmt, scale=args.scale, limits=limits)
    except render.RenderUnavailable as exc:
        print(f"gradviz render: {exc}", file=sys.stderr)
        return 1
    return _write(args.output, data) or status


def _write(path: str, data: bytes) -> int:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        print(f"gradviz render: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def _write_walkthrough(args: argparse.Namespace, trace, fmt: str, options: DrawOptions) -> int:
    """The walk-through's frames as a PDF or GIF; 0 written, 1 nothing to walk, 2 unwritable."""
    # pypdf and PIL: only for the walk-through
    from gradviz.graph import walkthrough, walkthrough_gif

    record = trace.backward[-1] if trace.backward else None
    if record is None or not record.steps or trace.graph is None:
        print(
            "gradviz render: --walkthrough needs a backward pass: add --backward NAME "
            "(or call .backward() in the program)",
            file=sys.stderr,
        )
        return 1
    dots = walkthrough.frames(trace.graph, record, options)
    limits = render.NO_LIMITS if args.no_limits else render.CLI_LIMITS
    try:
        if fmt == GIF:
            data = walkthrough_gif.gif_bytes(dots, scale=args.scale, limits=limits)
        else:
            data = walkthrough.pdf_bytes(dots, limits=limits)
    except render.RenderUnavailable as exc:
        print(f"gradviz render: {exc}", file=sys.stderr)
        return 1
    return _write(args.output, data)


def _write_slides(args: argparse.Namespace, trace, fmt: str, options: DrawOptions) -> int:
    """The graph on 16:9 slides (gradviz.graph.slides): one OUT, or OUT-1, OUT-2, ... for
    several SVGs or PNGs (a PDF holds them all as pages)."""
    from gradviz.graph.slides import export, layout

    if options.view != "values":
        print("gradviz render: --slide draws the values view", file=sys.stderr)
        return 2
    model = trace.graph if trace.graph is not None else GraphModel()
    limits = render.NO_LIMITS if args.no_limits else render.CLI_LIMITS
    try:
        deck = layout.plan(model, fmt, options, limits)
        if fmt == "pdf" or len(deck.slides) == 1:
            written = {args.output: export.deck_file(deck, fmt, options, limits, "slide")[0]}
        else:
            written = {
                export.numbered(args.output, i): export.slide_bytes(s, fmt, options, limits)
                for i, s in enumerate(deck.slides, 1)
            }
    except render.RenderUnavailable as exc:
        print(f"gradviz render: {exc}", file=sys.stderr)
        return 1
    for path, data in written.items():
        if _write(path, data):
            return 2
    folded = "" if deck.folded_depth is None else f", layers folded at depth {deck.folded_depth}"
    if deck.text_px < layout.MIN_TEXT_PX:
        folded += f" (more than {layout.MAX_SLIDES} slides would be needed for text of 18 px)"
    print(
        f"gradviz render: {len(deck.slides)} slide(s){folded}; smallest text "
        f"{deck.text_px:.1f} px at 1920x1080: {', '.join(written)}",
        file=sys.stderr,
    )
    return 0


def viewer_bytes(trace, dot: str, options: DrawOptions, limits: render.RenderLimits) -> bytes:
    """The interactive viewer as one HTML file (the drawing laid out by Graphviz)."""
    svg = render.render_bytes(dot, "svg", limits=limits)
    values = trace.graph is not None and options.view == "values"
    model = trace.graph if values else GraphModel()
    page = interactive.viewer_html(model, svg, source=trace.source, theme=options.theme)
    return page.encode("utf-8")
