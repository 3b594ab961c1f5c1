"""A minimal PNG reader for the headless-browser test: 8-bit RGB/RGBA, all five row filters."""

from __future__ import annotations

import struct
import zlib


def read_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, pixel bytes row after row)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        at += 12 + length
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    out = bytearray()
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        _unfilter(kind, row, prev, bpp)
        out += row
        prev = row
    return width, height, bpp, bytes(out)


def _unfilter(kind: int, row: bytearray, prev: bytearray, bpp: int) -> None:
    if kind == 0:
        return
    if kind == 2:
        row[:] = bytes((a + b) & 255 for a, b in zip(row, prev))
        return
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
        if kind == 1:
            add = left
        elif kind == 3:
            add = (left + up) // 2
        else:  # 4: Paeth
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            add = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
        row[i] = (row[i] + add) & 255


def count_near(png: tuple[int, int, int, bytes], rgb: tuple[int, int, int],
               tolerance: int = 24) -> int:
    """Pixels within ``tolerance`` of ``rgb`` on each channel."""
    _, _, bpp, pixels = png
    r0, g0, b0 = rgb
    return sum(1 for i in range(0, len(pixels), bpp)
               if abs(pixels[i] - r0) <= tolerance and abs(pixels[i + 1] - g0) <= tolerance
               and abs(pixels[i + 2] - b0) <= tolerance)
