"""Drawing a :class:`ctxtool.core.sizing.timeline.Timeline`: Unicode for a terminal, SVG or HTML for a
browser. Our own few lines rather than a plotting library: the picture is one curve, three
horizontal lines and a mark per compaction, and a self-contained SVG needs nothing more.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from ctxtool.core.sizing.status import human
from ctxtool.core.sizing.timeline import Mark, Timeline
from ctxtool.io.terminal import fit_line, shorten_middle, visible

LEVELS = " ▁▂▃▄▅▆▇█"
ROWS, MAX_COLUMNS = 12, 96
AXIS = len(f"{'':>7} │")  # the labels left of the bars
COMPACT, MICRO, LINE = "C", "m", "┈"


def columns_of(values: Sequence[int], width: int) -> list[tuple[int, int, int]]:
    """(value, first point, last point) per column: every point its own column when they
    fit, else each column the largest of the points it covers."""
    n = len(values)
    if n <= width:
        return [(v, i, i) for i, v in enumerate(values)]
    out = []
    for c in range(width):
        lo, hi = c * n // width, max(c * n // width, (c + 1) * n // width - 1)
        out.append((max(values[lo:hi + 1]), lo, hi))
    return out


def _top(timeline: Timeline) -> int:
    window = timeline.limits.window if timeline.limits else 0
    return max(window, timeline.peak, 1)


def _column_of(point: int, columns: list[tuple[int, int, int]]) -> int:
    for c, (_, lo, hi) in enumerate(columns):
        if lo <= point <= hi:
            return c
    return len(columns) - 1


def render_text(timeline: Timeline, *, rows: int = ROWS, width: int = 10_000) -> list[str]:
    """A bar per API call (or per group of calls), the auto-compact line dotted across, and
    the compactions (C) and microcompactions (m) marked under the axis; every line within
    ``width`` columns (at most MAX_COLUMNS bars, fewer on a narrower terminal)."""
    values = [p.tokens for p in timeline.points] + [timeline.now]
    columns = columns_of(values, max(10, min(MAX_COLUMNS, width - AXIS)))
    top = _top(timeline)
    limits = timeline.limits
    auto_row = int(rows * limits.auto_compact / top) if limits else -1
    said = (f": context over {len(timeline.points)} API calls (now {human(timeline.now)} of "
            f"{human(limits.window if limits else top)}, peak {human(timeline.peak)})")
    source = shorten_middle(visible(timeline.source or "-"), max(8, width - len(said)))
    lines = [source + said]
    for r in range(rows - 1, -1, -1):
        label = human(top) if r == rows - 1 else (
            human(limits.auto_compact) if limits and r == auto_row else "")
        cells = []
        for value, _, _ in columns:
            eighths = round(8 * (value * rows / top - r))
            cell = LEVELS[max(0, min(8, eighths))]
            cells.append(LINE if cell == " " and r == auto_row else cell)
        lines.append(f"{label:>7} │{''.join(cells)}")
    lines.append(f"{'0':>7} └{'─' * len(columns)}")
    marks = [" "] * len(columns)
    for mark in timeline.marks:
        column = _column_of(mark.before + 1, columns)
        marks[column] = COMPACT if mark.kind == "compact" or marks[column] == COMPACT else MICRO
    lines.append(f"{'':>7}  {''.join(marks).rstrip()}")
    lines += fit_line(_legend(timeline), width, indent=2)
    return lines


def _legend(timeline: Timeline) -> str:
    compactions = [m for m in timeline.marks if m.kind == "compact"]
    micro = len(timeline.marks) - len(compactions)
    parts = [f"{COMPACT} compaction ({len(compactions)}: " + ", ".join(
        f"{visible(m.trigger or '?')} at {human(m.pre_tokens) if m.pre_tokens else '?'}"
        for m in compactions) + ")" if compactions else "no compaction"]
    if micro:
        parts.append(f"{MICRO} microcompaction ({micro})")
    if timeline.limits:
        parts.append(f"{LINE} auto-compact at {human(timeline.limits.auto_compact)}")
    parts.append("last column: now")
    return "  " + "; ".join(parts)


# --- SVG ------------------------------------------------------------------------------------------

WIDTH, HEIGHT = 900, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 40, 44
COLORS = {"curve": "#1f6fd1", "fill": "#d6e6fa", "window": "#555555", "auto": "#d12f1f",
          "warning": "#e39b17", "compact": "#c0161f", "micro": "#e07b00", "grid": "#e4e4e4"}


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


class _Scale:
    def __init__(self, timeline: Timeline) -> None:
        self.top = _top(timeline) * 1.05
        self.n = max(1, len(timeline.points))  # the points, then "now"

    def x(self, index: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * index / self.n

    def y(self, tokens: float) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * tokens / self.top


def render_svg(timeline: Timeline) -> str:
    """A self-contained SVG (no scripts, no external references)."""
    scale = _Scale(timeline)
    title = (f"{timeline.source or 'transcript'}: context over {len(timeline.points)} API calls"
             + (f" ({timeline.model})" if timeline.model else ""))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
             f"<title>{_esc(title)}</title>",
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
             f'<text x="{LEFT}" y="22" font-size="13" font-weight="bold">{_esc(title)}</text>']
    parts += _grid(scale)
    parts += _limits(timeline, scale)
    parts += _curve(timeline, scale)
    parts += [_mark_svg(m, scale) for m in timeline.marks]
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 10}" '
                 f'text-anchor="middle">API call</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def nice_step(span: float, ticks: int) -> int:
    """A round step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks over
    ``span``."""
    raw = max(span / ticks, 1)
    power = 10 ** int(math.floor(math.log10(raw)))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _grid(scale: _Scale) -> list[str]:
    out = []
    step = nice_step(scale.top, 5)
    for tokens in range(0, int(scale.top) + 1, step):
        y = scale.y(tokens)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" '
                   f'stroke="{COLORS["grid"]}"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f"{human(tokens)}</text>")
    for i in range(0, scale.n + 1, nice_step(scale.n, 10)):
        out.append(f'<text x="{scale.x(i):.1f}" y="{HEIGHT - BOTTOM + 16}" '
                   f'text-anchor="middle">{i}</text>')
    return out


def _limits(timeline: Timeline, scale: _Scale) -> list[str]:
    limits = timeline.limits
    if limits is None:
        return []
    out = []
    for name, tokens, dash, label in (
            ("window", limits.window, "", "window"),
            ("auto", limits.auto_compact, "6 4", "auto-compact"),
            ("warning", limits.warning, "2 4", "warning")):
        y = scale.y(tokens)
        out.append(f'<line class="limit-{name}" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" '
                   f'y2="{y:.1f}" stroke="{COLORS[name]}" stroke-width="1.5"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        out.append(f'<text x="{WIDTH - RIGHT - 4}" y="{y - 4:.1f}" text-anchor="end" '
                   f'fill="{COLORS[name]}">{label} {human(tokens)}</text>')
    return out


def _curve(timeline: Timeline, scale: _Scale) -> list[str]:
    values = [p.tokens for p in timeline.points] + [timeline.now]
    coords = [(scale.x(i), scale.y(v)) for i, v in enumerate(values)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    base = scale.y(0)
    area = f"{coords[0][0]:.1f},{base:.1f} {line} {coords[-1][0]:.1f},{base:.1f}"
    x, y = coords[-1]
    return [f'<polygon points="{area}" fill="{COLORS["fill"]}"/>',
            f'<polyline class="context" points="{line}" fill="none" stroke="{COLORS["curve"]}" '
            f'stroke-width="2"/>',
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{COLORS["curve"]}"/>',
            f'<text x="{x - 6:.1f}" y="{y - 8:.1f}" text-anchor="end" fill="{COLORS["curve"]}">'
            f"now {human(timeline.now)}</text>"]


def _mark_svg(mark: Mark, scale: _Scale) -> str:
    x = scale.x(mark.before + 0.5)
    if mark.kind == "compact":
        label = f"compaction ({mark.trigger or '?'}" + (
            f", {human(mark.pre_tokens)} before)" if mark.pre_tokens else ")")
        color, dash = COLORS["compact"], ""
    else:
        label = "microcompaction" + (f" (-{human(mark.saved)})" if mark.saved else "")
        color, dash = COLORS["micro"], ' stroke-dasharray="3 3"'
    top, bottom = scale.y(scale.top / 1.05), scale.y(0)
    return (f'<g class="mark-{mark.kind}"><line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" '
            f'y2="{bottom:.1f}" stroke="{color}" stroke-width="2"{dash}/>'
            f"<title>{_esc(label)}</title>"
            f'<text x="{x + 3:.1f}" y="{top + 12:.1f}" fill="{color}">{_esc(label)}</text></g>')


def render_html(timeline: Timeline) -> str:
    """The SVG in a self-contained HTML page, with a table of the compactions."""
    rows = "".join(
        f"<tr><td>{_esc(m.kind)}</td><td>{m.before + 1}</td><td>{_esc(m.trigger or '')}</td>"
        f"<td>{_esc(m.pre_tokens if m.pre_tokens is not None else '')}</td>"
        f"<td>{_esc(m.saved if m.saved is not None else '')}</td>"
        f"<td>{_esc(m.timestamp or '')}</td></tr>" for m in timeline.marks)
    table = ("<table><tr><th>what</th><th>after call</th><th>trigger</th><th>tokens before"
             "</th><th>tokens saved</th><th>time</th></tr>" + rows + "</table>") if rows else ""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(timeline.source or 'ctxtool timeline')}</title>"
            "<style>body{font-family:sans-serif;margin:16px}td,th{padding:2px 8px;"
            "text-align:left}</style></head><body>\n" + render_svg(timeline) + table
            + "\n</body></html>\n")
