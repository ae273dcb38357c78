#!/usr/bin/env python3
# Turns the PMI transcripts of tests/corpus/pmi into pmi_server fuzz seeds (the op format is
# documented in pmi_server_fuzz.cpp): each client line becomes data ops, each E line an EOF,
# and every request is followed by "complete the announced fences", as the replayer does; the
# header carries the transcript's connection mode and local rank count.
# Usage: transcript_seeds.py OUT_DIR TRANSCRIPT...
import os
import re
import sys

OP_EOF = 0x80
OP_COMPLETE = 0xA0
MAX_CONNS = 4  # the header's two bits


def unescape(text):
    """The corpus escapes: \\n \\0 \\\\ \\xNN (see tests/unit/pmi/pmi_test_support.cpp)."""
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out += c.encode("latin-1")
            i += 1
            continue
        e = text[i + 1]
        if e == "n":
            out += b"\n"
        elif e == "0":
            out += b"\0"
        elif e == "x" and i + 3 < len(text) + 1:
            out.append(int(text[i + 2:i + 4], 16))
            i += 2
        else:
            out += e.encode("latin-1")
        i += 2
    return bytes(out)


def seed(path, mode):
    known = True
    local = 4
    steps = []
    with open(path, encoding="latin-1") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("@connect"):
                known = line.split()[1] == "known"
            if line.startswith("@local_ranks"):
                local = max(1, min(4, len(line.split()) - 1))
            m = re.match(r"([CE])(\d+)(?: (.*))?$", line)
            if m:
                steps.append((m.group(1), int(m.group(2)), unescape(m.group(3) or "")))
    conns = min(MAX_CONNS, 1 + max(conn for _, conn, _ in steps))
    if mode is None:
        mode = 0 if known else 1
    out = bytearray([(conns - 1) | mode << 2 | (4 - local) << 5])
    for kind, conn, data in steps:
        conn %= conns
        if kind == "E":
            out.append(OP_EOF | conn)
            continue
        for at in range(0, len(data), 255):
            chunk = data[at:at + 255]
            out += bytes([conn, len(chunk)]) + chunk
        out.append(OP_COMPLETE)
    return bytes(out)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for path in sys.argv[2:]:
        name = os.path.splitext(os.path.basename(path))[0]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(seed(path, None))
        if "pmi-port" in name:  # the same client through the PMI_PORT door (mode 2)
            with open(os.path.join(out_dir, name + "-port-ids"), "wb") as f:
                f.write(seed(path, 2))


if __name__ == "__main__":
    main()
