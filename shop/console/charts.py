"""Server-side SVG bar charts: geometry computed here, drawn by the template (no script, no library)."""

from dataclasses import dataclass

WIDTH, HEIGHT = 360, 160
LEFT, BOTTOM, TOP = 44, 22, 10


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value: str

    @property
    def center(self) -> float:
        return round(self.x + self.width / 2, 1)


@dataclass(frozen=True)
class Chart:
    title: str
    bars: list[Bar]
    top_label: str
    css: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    base: int = HEIGHT - BOTTOM


def bar_chart(title: str, labels: list[str], values: list[float | None], fmt, css: str = "") -> Chart:
    """Bars for values (None draws nothing), scaled to the largest; `fmt` writes a value as text."""
    peak = max((v for v in values if v), default=0) or 1
    plot_height = HEIGHT - BOTTOM - TOP
    slot = (WIDTH - LEFT) / max(1, len(values))
    bars = []
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = round(plot_height * (value or 0) / peak, 1)
        x = round(LEFT + index * slot + slot * 0.15, 1)
        text = "no data" if value is None else fmt(value)
        bars.append(Bar(x, HEIGHT - BOTTOM - height, round(slot * 0.7, 1), height, label, text))
    return Chart(title, bars, fmt(peak) if any(values) else fmt(0), css)


def usage_charts(series: list[dict]) -> list[Chart]:
    """The Overview's three charts of a daily usage series."""
    labels = [day["day"][5:] for day in series]  # MM-DD fits under a bar at phone width
    return [
        bar_chart("Requests per day", labels, [d["requests"] for d in series], lambda v: f"{int(v)}"),
        bar_chart("Error rate", labels, [d["error_rate"] for d in series], lambda v: f"{v:.1%}", "bad"),
        bar_chart("p95 latency", labels, [d["p95_ms"] for d in series], lambda v: f"{int(v)} ms", "slow"),
    ]
