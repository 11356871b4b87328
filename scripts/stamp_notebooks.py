#!/usr/bin/env python3
"""Stamp executed notebooks: every code cell that has outputs gets the sha256 of its source in
metadata.vaisgplvm.source_sha256, so that notebooks/notebooks_test.go (TestSavedOutputsMatchSources)
can tell saved outputs made by the cell's current code from stale ones. Run it only right after
executing the notebook (scripts/run-notebooks.sh does both); stamping old outputs defeats the check.

    python3 scripts/stamp_notebooks.py notebooks/01-annealed-importance-sampling.ipynb ...
"""
import hashlib
import json
import sys


def source_sha256(cell):
    src = cell.get("source", "")
    if isinstance(src, list):
        src = "".join(src)
    return hashlib.sha256(src.encode("utf-8")).hexdigest()


def stamp(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    n = 0
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        meta = cell.setdefault("metadata", {}).setdefault("vaisgplvm", {})
        if cell.get("outputs"):
            meta["source_sha256"] = source_sha256(cell)
            n += 1
        else:
            meta.pop("source_sha256", None)
        if not meta:
            del cell["metadata"]["vaisgplvm"]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{path}: {n} code cells stamped")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: stamp_notebooks.py NOTEBOOK.ipynb ...")
    for p in sys.argv[1:]:
        stamp(p)
