#!/usr/bin/env python3
"""Writes OUT_DIR/rank<R>.json for R < ranks: the real 1F1B fixture's rank traces
(tests/data/kineto/1f1b-<ranks>) repeated step after step until each holds EVENTS complete events,
for the importer benchmark (docs/BENCHMARKS.md). Timestamps move on by one step per copy, so the
result is a long profile of the same job. Usage: make_kineto_bench_data.py OUT_DIR [EVENTS] [RANKS]
"""
import gzip
import json
import os
import sys

out, events, ranks = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000, int(sys.argv[3]) if len(sys.argv) > 3 else 4
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "kineto", f"1f1b-{ranks}")
os.makedirs(out, exist_ok=True)
for r in range(ranks):
    doc = json.load(gzip.open(os.path.join(src, f"rank{r}.json.gz")))
    base = [e for e in doc["traceEvents"] if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in base) - min(e["ts"] for e in base) + 1000.0
    with open(os.path.join(out, f"rank{r}.json"), "w") as f:
        head = {k: v for k, v in doc.items() if k != "traceEvents"}
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        n = 0
        copy = 0
        while n < events:
            for e in base:
                if n == events:
                    break
                shifted = dict(e)
                shifted["ts"] = round(e["ts"] + copy * span, 3)
                f.write(("," if n else "") + json.dumps(shifted) + "\n")
                n += 1
            copy += 1
        f.write("]}\n")
    print(f"{out}/rank{r}.json: {events} events", file=sys.stderr)
