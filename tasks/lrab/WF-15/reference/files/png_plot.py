"""A tiny standard-library-only plotter: RGB canvas, lines, markers, text, PNG.

No plotting library is available, so the figure is rasterised by hand and
written as a PNG (8-bit RGB, filter type 0 per row, zlib-compressed IDAT,
CRC-32 per chunk, as the PNG specification requires).
"""

import math
import struct
import zlib

# 3x5 bitmap font: each glyph is five rows of three pixels ("1" = ink).
FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001111", "A": "010101111101101", "B": "110101110101110",
    "C": "011100100100011", "D": "110101101101110", "E": "111100110100111",
    "F": "111100110100100", "G": "011100101101011", "H": "101101111101101",
    "I": "111010010010111", "J": "001001001101010", "K": "101101110101101",
    "L": "100100100100111", "M": "101111111101101", "N": "110101101101101",
    "O": "010101101101010", "P": "110101110100100", "Q": "010101101110011",
    "R": "110101110101101", "S": "011100010001110", "T": "111010010010010",
    "U": "101101101101111", "V": "101101101101010", "W": "101101111111101",
    "X": "101101010101101", "Y": "101101010010010", "Z": "111001010100111",
    ".": "000000000000010", "-": "000000111000000", "/": "001001010100100",
    "(": "010100100100010", ")": "010001001001010", "=": "000111000111000",
    ":": "000010000010000", "_": "000000000000111", "+": "000010111010000",
    ",": "000000000010100", "^": "010101000000000", " ": "000000000000000",
    "%": "101001010100101",
}

BLACK = (0, 0, 0)
WHITE = (255, 255, 255)
GREY = (200, 200, 200)


class Canvas:
    def __init__(self, width, height, background=WHITE):
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def set(self, x, y, color):
        if 0 <= x < self.width and 0 <= y < self.height:
            i = 3 * (y * self.width + x)
            self.pixels[i:i + 3] = bytes(color)

    def rect(self, x0, y0, x1, y1, color):
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                self.set(x, y, color)

    def line(self, x0, y0, x1, y1, color, width=1, dash=0):
        """Bresenham line; `dash` > 0 draws dash-long segments with equal gaps."""
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        step = 0
        half = width // 2
        while True:
            if not dash or (step // dash) % 2 == 0:
                self.rect(x0 - half, y0 - half, x0 - half + width - 1, y0 - half + width - 1, color)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy
            step += 1

    def disc(self, cx, cy, r, color):
        cx, cy = int(round(cx)), int(round(cy))
        for y in range(cy - r, cy + r + 1):
            for x in range(cx - r, cx + r + 1):
                if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                    self.set(x, y, color)

    def square(self, cx, cy, r, color):
        cx, cy = int(round(cx)), int(round(cy))
        self.rect(cx - r, cy - r, cx + r, cy + r, color)

    def text(self, x, y, s, color=BLACK, scale=2):
        """Draw upper-cased text with its top-left corner at (x, y)."""
        for ch in s.upper():
            glyph = FONT.get(ch, FONT[" "])
            for k, bit in enumerate(glyph):
                if bit == "1":
                    gx, gy = k % 3, k // 3
                    self.rect(x + gx * scale, y + gy * scale,
                              x + gx * scale + scale - 1, y + gy * scale + scale - 1, color)
            x += 4 * scale

    @staticmethod
    def text_width(s, scale=2):
        return len(s) * 4 * scale - scale

    def to_png(self):
        raw = bytearray()
        stride = 3 * self.width
        for y in range(self.height):
            raw.append(0)  # filter type 0 (None)
            raw.extend(self.pixels[y * stride:(y + 1) * stride])

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))

    def save(self, path):
        with open(path, "wb") as handle:
            handle.write(self.to_png())


def nice_ticks(lo, hi, count=5):
    """Round tick positions (1, 2, 2.5 or 5 times a power of ten) inside [lo, hi]."""
    raw_step = (hi - lo) / count
    base = 10 ** math.floor(math.log10(raw_step))
    step = base * next(c for c in (1, 2, 2.5, 5, 10) if base * c >= raw_step)
    k = math.ceil(lo / step - 1e-9)
    ticks = []
    while k * step <= hi + 1e-9 * step:
        ticks.append(round(k * step, 10))
        k += 1
    return ticks


class Plot:
    """Axes with linear scales mapped onto a Canvas."""

    def __init__(self, canvas, box, xlim, ylim):
        self.c = canvas
        self.left, self.top, self.right, self.bottom = box
        self.xlim, self.ylim = xlim, ylim

    def px(self, x):
        x0, x1 = self.xlim
        return self.left + (x - x0) / (x1 - x0) * (self.right - self.left)

    def py(self, y):
        y0, y1 = self.ylim
        return self.bottom - (y - y0) / (y1 - y0) * (self.bottom - self.top)

    def axes(self, xlabel, ylabel, xfmt="%.2f", yfmt="%.1f"):
        c = self.c
        for tx in nice_ticks(*self.xlim):
            x = self.px(tx)
            c.line(x, self.top, x, self.bottom, GREY)
            label = xfmt % tx
            c.text(int(x - c.text_width(label) / 2), self.bottom + 8, label)
        for ty in nice_ticks(*self.ylim):
            y = self.py(ty)
            c.line(self.left, y, self.right, y, GREY)
            label = yfmt % ty
            c.text(self.left - 8 - c.text_width(label), int(y - 5), label)
        c.line(self.left, self.bottom, self.right, self.bottom, BLACK, width=2)
        c.line(self.left, self.top, self.left, self.bottom, BLACK, width=2)
        c.line(self.right, self.top, self.right, self.bottom, BLACK)
        c.line(self.left, self.top, self.right, self.top, BLACK)
        c.text(int((self.left + self.right - c.text_width(xlabel)) / 2), self.bottom + 30, xlabel)
        c.text(self.left, self.top - 20, ylabel)

    def polyline(self, xs, ys, color, width=2, dash=0):
        pts = [(self.px(x), self.py(y)) for x, y in zip(xs, ys)]
        for (a, b), (p, q) in zip(pts, pts[1:]):
            self.c.line(a, b, p, q, color, width=width, dash=dash)
