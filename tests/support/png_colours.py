#!/usr/bin/env python3
"""Checks that a screenshot paints given colours (the Chromium tests of rota's pages).

    png_colours.py PNG PREFIX WHAT NAME=RRGGBB...

Decodes the PNG (8-bit RGB or RGBA, as Chromium writes it), counts the pixels of each colour,
prints "PREFIX: N px of NAME painted", and exits with "PREFIX: the screenshot shows no NAME:
WHAT" for a colour it does not find.
"""
import struct
import sys
import zlib


def pixel_counts(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and colour in (2, 6), "unexpected PNG format"
    bpp = 3 if colour == 2 else 4
    raw, stride, prev, counts = zlib.decompress(idat), width * bpp, bytearray(width * bpp), {}
    for row in range(height):
        f, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for i in range(0, stride, bpp):
            px = bytes(line[i:i + 3])
            counts[px] = counts.get(px, 0) + 1
        prev = line
    return counts


def main(argv):
    path, prefix, what = argv[1], argv[2], argv[3]
    counts = pixel_counts(path)
    for spec in argv[4:]:
        name, hexrgb = spec.rsplit("=", 1)
        n = counts.get(bytes.fromhex(hexrgb), 0)
        if n == 0:
            sys.exit("%s: the screenshot shows no %s: %s" % (prefix, name, what))
        print("%s: %d px of %s painted" % (prefix, n, name))


if __name__ == "__main__":
    main(sys.argv)
