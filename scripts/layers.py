#!/usr/bin/python3
"""layers.py MAP OBJDIR

Checks the layering of drivers/softhca from its object files: MAP is
docs/layers.md (a ```layers block, "LAYER: FILE...", top to bottom, and
an ```upward block of known upward calls, "CALLER -> CALLEE"), OBJDIR a
build's drivers/softhca.  A file calls another when one of its
undefined symbols (nm -u) is defined there.  Fails, saying which, on:
an object file that is not in the map, a map entry with no object file,
a call upward that is not known, and a known upward call that no longer
exists.
"""

import pathlib
import re
import subprocess
import sys


def blocks(text, kind):
    """The lines of the fenced ```KIND blocks of a Markdown text."""
    found = re.findall(r"^```" + kind + r"\n(.*?)^```", text, re.M | re.S)
    return [line.strip() for b in found for line in b.splitlines()
            if line.strip()]


def nm(obj, *args):
    """The symbol names nm lists for an object file."""
    out = subprocess.run(["nm", *args, str(obj)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text = pathlib.Path(sys.argv[1]).read_text()
    objdir = pathlib.Path(sys.argv[2])
    rank = {}
    for depth, line in enumerate(blocks(text, "layers")):
        _, files = line.split(":", 1)
        for name in files.split():
            rank[name] = depth
    known = {tuple(part.strip() for part in line.split("->"))
             for line in blocks(text, "upward")}

    objs = {o.stem: o for o in objdir.glob("*.o")
            if o.stem not in ("softhca", "softhca.mod")}
    errors = [f"{name}.o: not in the map" for name in sorted(objs)
              if name not in rank]
    errors += [f"{name}: in the map, but no {name}.o in {objdir}"
               for name in sorted(rank) if name not in objs]
    defined = {}
    for name, obj in objs.items():
        for sym in nm(obj, "--defined-only", "--extern-only"):
            defined[sym] = name
    upward = set()
    for name, obj in sorted(objs.items()):
        for sym in sorted(nm(obj, "--undefined-only")):
            callee = defined.get(sym)
            if callee is None or callee == name or name not in rank:
                continue
            if rank.get(callee, 0) < rank[name]:
                upward.add((name, callee))
                if (name, callee) not in known:
                    errors.append(f"{name}.c calls {sym}() of {callee}.c, "
                                  "a higher layer")
    errors += [f"known upward call {a} -> {b} no longer exists: "
               "take it off docs/layers.md" for a, b in sorted(known - upward)]
    for error in errors:
        print(error)
    print(f"layers: {len(objs)} files, {len(upward)} known upward calls "
          f"left, {len(errors)} errors")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
