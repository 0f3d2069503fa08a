#!/usr/bin/env python3
"""Measures solid-coloured shapes in a PNG screenshot, with nothing but the standard library
(zlib and struct), for the R2 render test (Tests/BlockDaemonTests/Integration/ReportHTMLRenderTests.swift).

  pngbars.py measure FILE RRGGBB...   prints JSON: the image's size and, per colour, how many
                                      pixels have it, its vertical bars (runs of adjacent
                                      columns holding it: x0, x1, its top and bottom rows)
                                      and its horizontal lines (runs of rows holding a run of
                                      it at least 40 px long: y0, y1, x0, x1)
  pngbars.py crop FILE OUT [MARGIN]   writes OUT: FILE without the rows of plain background
                                      (the bottom-left pixel's colour) below the content,
                                      keeping MARGIN (24) rows

A pixel has a colour when each channel is within 2 of it. Reads 8-bit RGB and RGBA, not
interlaced (what Chromium writes).
"""
import json
import re
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}: only 8-bit RGB/RGBA")
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        unfilter(kind, line, previous, bpp)
        rows.append(line)
        previous = line
    return width, height, bpp, rows


def unfilter(kind, line, prev, bpp):
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + b) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 0xFF
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF


def mask(width, bpp, rows, hexcolour):
    """Per row, the set of x whose pixel has the colour (a regular expression finds them all,
    overlapping, at C speed; only those starting a pixel count)."""
    want = bytes.fromhex(hexcolour)
    channel = lambda v: b"[" + re.escape(bytes([max(0, v - 2)])) + b"-" + re.escape(bytes([min(255, v + 2)])) + b"]"
    pattern = re.compile(b"(?=" + b"".join(channel(v) for v in want) + b")", re.S)
    return [{m.start() // bpp for m in pattern.finditer(row) if m.start() % bpp == 0} for row in rows]


def columns(m, width):
    """Runs of adjacent columns holding the colour, with the topmost and bottommost rows of it
    (a line drawn across a bar does not split it)."""
    top, bottom = {}, {}
    for y, xs in enumerate(m):
        for x in xs:
            top.setdefault(x, y)
            bottom[x] = y
    bars, x = [], 0
    while x < width:
        if x not in top:
            x += 1
            continue
        x0 = x
        while x < width and x in top:
            x += 1
        bars.append({"x0": x0, "x1": x - 1, "top": min(top[i] for i in range(x0, x)), "bottom": max(bottom[i] for i in range(x0, x))})
    return bars


def lines(m, shortest=40):
    """Runs of rows whose longest run of the colour is at least `shortest` pixels."""
    found = []
    for y, xs in enumerate(m):
        best, run = None, None
        for x in sorted(xs):
            run = (run[0], x) if run and run[1] == x - 1 else (x, x)
            if best is None or run[1] - run[0] > best[1] - best[0]:
                best = run
        if best is None or best[1] - best[0] + 1 < shortest:
            continue
        if found and found[-1]["y1"] == y - 1:
            found[-1].update(y1=y, x0=min(found[-1]["x0"], best[0]), x1=max(found[-1]["x1"], best[1]))
        else:
            found.append({"y0": y, "y1": y, "x0": best[0], "x1": best[1]})
    return found


def measure(path, colours):
    width, height, bpp, rows = decode(path)
    out = {"width": width, "height": height, "colours": {}}
    for c in colours:
        m = mask(width, bpp, rows, c)
        out["colours"][c] = {"count": sum(map(len, m)), "bars": columns(m, width), "lines": lines(m)}
    print(json.dumps(out))


def crop(path, target, margin=24):
    width, height, bpp, rows = decode(path)
    background = bytes(rows[-1][0:bpp])
    last = height - 1
    while last > 0 and rows[last] == background * width:
        last -= 1
    keep = min(height, last + 1 + margin)
    raw = b"".join(b"\x00" + bytes(rows[y]) for y in range(keep))
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, keep, 8, 2 if bpp == 3 else 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(target, "wb").write(png)
    print(json.dumps({"width": width, "height": keep}))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "measure":
        measure(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "crop":
        crop(sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:]))
    else:
        sys.exit(__doc__)
