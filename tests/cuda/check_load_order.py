#!/usr/bin/env python3
"""Fails when a kernel's PTX has a plain global load after a global store in one basic block.

The compiler cannot tell a kernel's output buffers from its inputs, so it keeps such a load behind
the store. When the store needs an earlier load's words (an input_copy of the input, an epilogue's
output), the thread's loads then run one memory latency at a time: ModUp's input-copying INTT lost a
quarter of its time that way (docs/performance-journal.md, "loads before the stores that follow
them"). Read-only loads (ld.global.nc)
may move past stores and are not counted; loads in a later basic block (a loop's next iteration,
the other side of a branch) are not flagged.

Usage: check_load_order.py FILE.ptx...
"""

import re
import sys

ENTRY = re.compile(r"^\.(?:visible\s+)?entry\s+(\S+?)\(", re.M)
LABEL = re.compile(r"^\$?[\w$]+:$")
BRANCH = re.compile(r"^(?:@!?%p\d+\s+)?(?:bra|ret|exit)\b")
STORE = re.compile(r"^(?:@!?%p\d+\s+)?st\.global\b")
LOAD = re.compile(r"^(?:@!?%p\d+\s+)?(ld\.global\S*)")


def kernels(ptx):
    """(name, body) of every kernel entry."""
    starts = [(m.group(1), m.start()) for m in ENTRY.finditer(ptx)]
    for i, (name, at) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(ptx)
        yield name, ptx[at:end]


def load_after_store(body):
    """The first plain global load that follows a global store in the same basic block, or None."""
    stored = False
    for raw in body.split("\n"):
        line = raw.strip()
        if LABEL.match(line) or BRANCH.match(line):
            stored = False
        elif STORE.match(line):
            stored = True
        else:
            m = LOAD.match(line)
            if m and stored and ".nc" not in m.group(1):
                return line
    return None


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    bad = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            ptx = f.read()
        found = list(kernels(ptx))
        if not found:
            print(f"{path}: no kernel entry found (is this PTX?)")
            return 1
        for name, body in found:
            line = load_after_store(body)
            if line is not None:
                bad += 1
                print(f"{path}: {name}: global load after a global store: {line}")
        print(f"{path}: {len(found)} kernels checked")
    if bad:
        print(f"{bad} kernel(s) load after a store; issue the loads first (see ntt_common.cuh, kLoadBatch)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
