"""What a layout will cost Graphviz's `dot`, read from the DOT text before `dot` runs.

`dot` puts every node on a row (its rank) and draws an arrow that skips rows as a chain of
hidden points, one on each row it passes; ordering the rows to keep arrows from crossing
then works on all of them. So the count that makes a layout slow is not the nodes or the
arrows, but the rows the arrows skip: a 4-line loop that adds the same leaf at every step
(`h = h * 1.01 + x`, 50 steps: 119 nodes, 163 arrows) takes `dot` 2.5 s of CPU, 60 steps
10 s and 100 steps more than 5 minutes, while a 2,003-node chain takes 0.2 s
(bench/layout_cost.py, docs/BENCHMARKS.md).

`long_steps` counts them: for each arrow, the rows between its two ends less one, with the
rows of a longest-path layering (each node one row below the lowest node pointing at it),
then each node with fewer arrows in than out moved down next to the first node it points
at, as `dot`'s ranking would. Layer boxes (clusters) change which rows are fixed: see
layout_cost. An arrow with a `label` (a small drawing's "input (no grad)") makes `dot`
double every arrow's rows, so each arrow then counts 2 x rows - 1: a 40-step RNN sharing
its weight, 135 nodes, took more than 30 s. Clusters are counted as well, though they cost
far less (701: 0.6 s).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

# A quoted string (node ids, labels), an arrow, a word (bare ids, keywords), or one other
# character. Quoted strings are whole tokens, so an arrow inside a label is not an arrow.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|--|[A-Za-z0-9_.\x80-\uffff]+|\S', re.S)
_NOT_IDS = frozenset(("graph", "node", "edge", "subgraph", "digraph", "strict"))


@dataclass(frozen=True)
class LayoutCost:
    nodes: int  # nodes that some arrow touches
    edges: int  # arrows
    long_steps: int  # rows skipped by arrows, all together
    clusters: int  # subgraphs named cluster*


def _name(token: str) -> str | None:
    """The node id a token names, or None (punctuation, keywords)."""
    if token.startswith('"'):
        return token[1:-1]
    if token[0] in "[]{}=;,:<>-" or token in _NOT_IDS:
        return None
    return token


@dataclass
class _Read:
    arrows: list[tuple[str, str]]  # (tail, head) between named nodes
    box: dict[str, int]  # the layer box (cluster) each node is in (0: none; first named in)
    clusters: int
    labelled: bool  # some arrow has a `label`: `dot` then doubles every arrow's rows


def _labels_an_arrow(tokens: list[str], k: int, arrow: str) -> bool:
    """Whether the attribute list opening at tokens[k] (a `[`) is an arrow's, or the arrows'
    default, and sets `label` (not `xlabel`, `headlabel`, `taillabel`: those take no rows)."""
    before = tokens[k - 2] if k >= 2 else ""
    ported = k >= 4 and tokens[k - 2] == ":" and tokens[k - 4] == arrow
    if not (before == arrow or ported or (k >= 1 and tokens[k - 1] == "edge")):
        return False
    for j in range(k + 1, len(tokens) - 1):
        if tokens[j] == "]":
            return False
        if tokens[j] == "label" and tokens[j + 1] == "=":
            return True
    return False


def _arrows(tokens: list[str]) -> _Read:
    """What layout_cost needs from the DOT's tokens."""
    arrows = []
    box: dict[str, int] = {}
    clusters = 0
    stack = [0]  # the cluster each open brace is in
    opening = 0  # the cluster the next `{` opens (a cluster's own, or its parent's)
    # A digraph's arrows are `->`; `--` is one only in an undirected graph.
    arrow = "->" if "digraph" in tokens[:2] else "--"
    last = len(tokens) - 1
    labelled = False
    for i, tok in enumerate(tokens):
        if tok == "[":
            labelled = labelled or _labels_an_arrow(tokens, i, arrow)
        elif tok == "{":
            stack.append(opening)
            opening = stack[-1]
        elif tok == "}":
            if len(stack) > 1:
                stack.pop()
            opening = stack[-1]
        elif tok == "subgraph" and i < last:
            name = _name(tokens[i + 1])
            if name is not None and name.startswith("cluster"):
                clusters += 1
                opening = clusters
        elif tok == arrow and 0 < i < last:
            j = i - 1
            if j >= 2 and tokens[j - 1] == ":":  # a port: "a":p -> b
                j -= 2
            tail, head = _name(tokens[j]), _name(tokens[i + 1])
            if tail is not None and head is not None:
                arrows.append((tail, head))
                box.setdefault(tail, stack[-1])
                box.setdefault(head, stack[-1])
        elif i < last and tokens[i + 1] == "[" and (i == 0 or tokens[i - 1] != "="):
            name = _name(tok)
            if name is not None:  # a node statement
                box.setdefault(name, stack[-1])
    return _Read(arrows, box, clusters, labelled)


def _order(nodes: list[str], succ: dict[str, list[str]]) -> dict[str, int]:
    """Each node's place in a depth-first reverse post-order: a topological order of the
    graph with its cycles' back arrows left out (`dot` turns those round)."""
    seen: set[str] = set()
    post: list[str] = []
    for root in nodes:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(succ[root]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(succ[child])))
                    break
            else:
                stack.pop()
                post.append(node)
    return {node: k for k, node in enumerate(reversed(post))}


def ranks(arrows: list[tuple[str, str]]) -> dict[str, int]:
    """Each node's row: a longest-path layering, then each node with fewer arrows in than
    out moved down to just above the first node it points at (a source next to what it
    feeds), as `dot`'s ranking would. An arrow against the topological order counts
    turned round."""
    succ: dict[str, list[str]] = defaultdict(list)
    nodes: list[str] = []
    for tail, head in arrows:
        for n in (tail, head):
            if n not in succ:
                succ[n] = []
                nodes.append(n)
        succ[tail].append(head)
    place = _order(nodes, succ)
    pred: dict[str, list[str]] = defaultdict(list)
    down: dict[str, list[str]] = defaultdict(list)
    for tail, head in arrows:
        if tail == head:
            continue
        if place[tail] > place[head]:
            tail, head = head, tail
        pred[head].append(tail)
        down[tail].append(head)
    by_place = sorted(nodes, key=place.__getitem__)
    rank: dict[str, int] = {}
    for node in by_place:
        rank[node] = max((rank[p] + 1 for p in pred[node]), default=0)
    for node in reversed(by_place):  # from the last: what they point at is placed already
        if down[node] and len(pred[node]) < len(down[node]):
            rank[node] = min(rank[h] for h in down[node]) - 1
    return rank


def _blocks(nodes: Iterable[str], hard: list[tuple[str, str]]) -> dict[str, str]:
    """Each node's block: the nodes joined to it by hard arrows (union-find)."""
    parent = {n: n for n in nodes}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for tail, head in hard:
        parent[find(tail)] = find(head)
    return {n: find(n) for n in parent}


def layout_cost(dot_source: str) -> LayoutCost:
    """The counts that make `dot` slow, read from DOT text (gradviz's own drawings and
    torchviz's; not a full DOT parser: arrows between subgraphs are not counted).

    `dot` ranks the nodes of one cluster (or those outside every cluster) against each
    other by their arrows, as fixed rows (hard arrows); an arrow between two clusters, or
    between a cluster and the rest, it may shorten by moving the two apart or even turn
    upwards (soft). So rows are counted block by block: nodes joined by hard arrows keep
    the rows of their own layering, and two blocks joined by soft arrows are placed so the
    shortest of those arrows takes one row. A leaf added at each of 100 steps costs more
    than 5 minutes outside layers, and 0.07 s with each step in a layer call of its own,
    where dot folds the chain; with all the steps inside one call it is slow again (80
    steps: 10 s), and counted: the steps are one block, fed by the leaf's soft arrows."""
    read = _arrows(_TOKEN.findall(dot_source))
    box = read.box
    arrows = [(t, h) for t, h in read.arrows if t != h]
    hard = [(t, h) for t, h in arrows if box[t] == box[h]]
    rank = ranks(hard)
    nodes = {n for arrow in read.arrows for n in arrow}
    block = _blocks(nodes, hard)
    rows = 2 if read.labelled else 1
    long_steps = sum(rows * abs(rank[h] - rank[t]) - 1 for t, h in hard)
    soft: dict[tuple[str, str], list[int]] = defaultdict(list)
    for t, h in arrows:
        if box[t] != box[h]:
            soft[block[t], block[h]].append(rank.get(h, 0) - rank.get(t, 0))
    for lengths in soft.values():
        shortest = min(lengths)
        long_steps += sum(rows * (n - shortest + 1) - 1 for n in lengths)
    return LayoutCost(len(nodes), len(read.arrows), long_steps, read.clusters)


def cannot_be_slow(dot_source: str, max_long_steps: int | None, max_clusters: int | None) -> bool:
    """True when the DOT is too small to pass either limit, uncounted: E arrows skip fewer
    than 2E rows each (E doubled by a label), and clusters need the word `subgraph`."""
    arrows = dot_source.count("->") + dot_source.count("--")
    return (max_long_steps is None or 2 * arrows * arrows <= max_long_steps) and (
        max_clusters is None or dot_source.count("subgraph") <= max_clusters
    )


def refusal(dot_source: str, max_long_steps: int | None, max_clusters: int | None) -> str | None:
    """Why `dot` is not asked to lay this graph out (over a limit), or None."""
    if cannot_be_slow(dot_source, max_long_steps, max_clusters):
        return None
    cost = layout_cost(dot_source)
    if max_long_steps is not None and cost.long_steps > max_long_steps:
        return (
            f"This graph would take Graphviz too long to lay out here: its arrows skip "
            f"{cost.long_steps:,} rows in all (the limit here is {max_long_steps:,}). An arrow "
            "from a tensor made early to one made much later, such as the same tensor used "
            "at every step of a loop, is drawn through every row between them. Run fewer "
            "steps, show one backward call instead of the whole run, or export DOT and "
            "render it on your own computer (`python -m gradviz render PROGRAM.py -o graph.svg`)."
        )
    if max_clusters is not None and cost.clusters > max_clusters:
        return (
            f"This graph would take Graphviz too long to lay out here: it has {cost.clusters:,} "
            f"layer boxes (the limit here is {max_clusters:,}), one for each call of a layer. "
            "Call the layers fewer times (a shorter loop), show one backward call instead of "
            "the whole run, or export DOT and render it on your own computer "
            "(`python -m gradviz render PROGRAM.py -o graph.svg`)."
        )
    return None
