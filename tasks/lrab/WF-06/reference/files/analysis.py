"""Aging study analysis: peak/valley of UTS and elongation and two line plots.

Reads aging_data.csv, prints the peak and valley of UTS and elongation and every
non-monotonic step above the peak, and writes fig_strength.png and fig_elongation.png.
The PNGs are drawn with a tiny raster plotter and written with zlib + struct only, so the
script needs nothing beyond the Python standard library.
"""
import csv
import struct
import zlib

WIDTH, HEIGHT = 640, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 24, 40, 60          # plot margins in pixels
WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (215, 215, 215)
SERIES_COLORS = {4.0: (31, 119, 180), 8.0: (255, 127, 14)}
HIGHLIGHT = (214, 39, 40)

# 5x7 bitmap glyphs for the few characters the labels use.
GLYPHS = {
    "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
    "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
    "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
    "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
    "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
    "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
    "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
    "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
    "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
    ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
    "h": ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #"],
    "C": [" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "],
    "M": ["#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"],
    "P": ["#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "],
    "a": ["     ", "     ", " ### ", "    #", " ####", "#   #", " ####"],
    "%": ["##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"],
    " ": ["     "] * 7,
}


class Canvas:
    def __init__(self, width, height, background=WHITE):
        self.width, self.height = width, height
        self.pixels = [[background] * width for _ in range(height)]

    def set(self, x, y, color):
        if 0 <= x < self.width and 0 <= y < self.height:
            self.pixels[y][x] = color

    def line(self, x0, y0, x1, y1, color, thickness=1):
        """Bresenham line, thickened with a square brush."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, r = dx + dy, thickness // 2
        while True:
            for ox in range(-r, thickness - r):
                for oy in range(-r, thickness - r):
                    self.set(x0 + ox, y0 + oy, color)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def disc(self, cx, cy, radius, color):
        for y in range(cy - radius, cy + radius + 1):
            for x in range(cx - radius, cx + radius + 1):
                if (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius:
                    self.set(x, y, color)

    def ring(self, cx, cy, radius, color, width=2):
        for y in range(cy - radius, cy + radius + 1):
            for x in range(cx - radius, cx + radius + 1):
                d2 = (x - cx) ** 2 + (y - cy) ** 2
                if (radius - width) ** 2 < d2 <= radius * radius:
                    self.set(x, y, color)

    def text(self, x, y, s, color=BLACK, scale=2):
        for i, ch in enumerate(s):
            for row, bits in enumerate(GLYPHS[ch]):
                for col, bit in enumerate(bits):
                    if bit == "#":
                        for oy in range(scale):
                            for ox in range(scale):
                                self.set(x + (i * 6 + col) * scale + ox, y + row * scale + oy, color)

    def text_width(self, s, scale=2):
        return len(s) * 6 * scale - scale

    def png_bytes(self):
        raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in self.pixels)

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def load(path="aging_data.csv"):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for key in ("aging_temperature_C", "aging_time_h", "UTS_MPa", "elongation_pct",
                    "hardness_HV", "alpha_fraction_pct"):
            r[key] = float(r[key])
    return rows


def series(rows, column):
    """{aging time: [(temperature, value), ...] sorted by temperature}."""
    out = {}
    for r in rows:
        out.setdefault(r["aging_time_h"], []).append((r["aging_temperature_C"], r[column]))
    return {t: sorted(points) for t, points in sorted(out.items())}


def plot(rows, column, y_lo, y_hi, y_step, unit, path, highlight=()):
    """Line plot of `column` against aging temperature, one line per aging time."""
    c = Canvas(WIDTH, HEIGHT)
    x_lo, x_hi = 440.0, 630.0
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + round((x - x_lo) / (x_hi - x_lo) * pw)

    def py(y):
        return TOP + ph - round((y - y_lo) / (y_hi - y_lo) * ph)

    y = y_lo
    while y <= y_hi + 1e-9:                                  # horizontal grid + y tick labels
        c.line(LEFT, py(y), LEFT + pw, py(y), GREY)
        label = f"{y:g}"
        c.text(LEFT - 8 - c.text_width(label), py(y) - 7, label)
        y += y_step
    for x in range(450, 631, 50):                            # vertical grid + x tick labels
        c.line(px(x), TOP, px(x), TOP + ph, GREY)
        c.text(px(x) - c.text_width(str(x)) // 2, TOP + ph + 10, str(x))
    c.line(LEFT, TOP, LEFT, TOP + ph, BLACK, 2)              # axes
    c.line(LEFT, TOP + ph, LEFT + pw, TOP + ph, BLACK, 2)
    c.text(LEFT + pw - c.text_width("C"), TOP + ph + 34, "C")   # x unit: deg C
    c.text(8, TOP - 28, unit)                                    # y unit
    for t, points in series(rows, column).items():
        color = SERIES_COLORS.get(t, BLACK)
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            c.line(px(x0), py(y0), px(x1), py(y1), color, 3)
        for x, y in points:
            c.disc(px(x), py(y), 5, color)
    for x, y in highlight:                                       # peak / anomaly markers
        c.ring(px(x), py(y), 11, HIGHLIGHT, 3)
    lx = LEFT + pw - 120                                         # legend
    for i, t in enumerate(sorted(SERIES_COLORS)):
        c.line(lx, TOP + 12 + i * 24, lx + 30, TOP + 12 + i * 24, SERIES_COLORS[t], 3)
        c.text(lx + 40, TOP + 5 + i * 24, f"{t:g}h")
    with open(path, "wb") as fh:
        fh.write(c.png_bytes())


def non_monotonic_above_peak(rows, column):
    """Steps that go up again after a series has passed its peak."""
    found = []
    for t, points in series(rows, column).items():
        peak_i = max(range(len(points)), key=lambda i: points[i][1])
        for (x0, y0), (x1, y1) in zip(points[peak_i:], points[peak_i + 1:]):
            if y1 > y0:
                found.append((t, x0, y0, x1, y1))
    return found


def main():
    rows = load()
    uts_peak = max(rows, key=lambda r: r["UTS_MPa"])
    uts_valley = min(rows, key=lambda r: r["UTS_MPa"])
    el_peak = max(rows, key=lambda r: r["elongation_pct"])
    el_valley = min(rows, key=lambda r: r["elongation_pct"])

    def where(r):
        return f"{r['aging_temperature_C']:g} C / {r['aging_time_h']:g} h"

    print(f"UTS peak: {uts_peak['UTS_MPa']:g} MPa at {where(uts_peak)}")
    print(f"UTS valley: {uts_valley['UTS_MPa']:g} MPa at {where(uts_valley)}")
    print(f"Elongation peak: {el_peak['elongation_pct']:g} % at {where(el_peak)}")
    print(f"Elongation valley: {el_valley['elongation_pct']:g} % at {where(el_valley)}")
    anomalies = non_monotonic_above_peak(rows, "UTS_MPa")
    for t, x0, y0, x1, y1 in anomalies:
        print(f"Non-monotonic UTS ({t:g} h series): {y0:g} MPa at {x0:g} C -> {y1:g} MPa at {x1:g} C")

    marks = [(uts_peak["aging_temperature_C"], uts_peak["UTS_MPa"])] + [(x1, y1) for _, _, _, x1, y1 in anomalies]
    plot(rows, "UTS_MPa", 960, 1120, 20, "MPa", "fig_strength.png", marks)
    el_marks = [(el_valley["aging_temperature_C"], el_valley["elongation_pct"])]
    plot(rows, "elongation_pct", 9, 14, 1, "%", "fig_elongation.png", el_marks)
    print("Wrote fig_strength.png and fig_elongation.png")


if __name__ == "__main__":
    main()
