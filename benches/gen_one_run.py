#!/usr/bin/env python3
"""One system, one run, N records: the shape where per-record passes over a whole run
would turn quadratic (previous/next, neighbourhoods, references).

Writes OUT/content/casebook.yaml-free site: content/big/system.yaml,
content/big/r1/run.yaml and N/50 reports of 50 heading-declared records each, every
record citing a file, stating two findings and naming three other records of the run
(one in its own report, two in others). Output is a pure function of (--records, --seed).

Usage:
    python3 benches/gen_one_run.py --records 10000 --out /tmp/onerun/10k [--seed 1]
"""

import argparse
import os
import random
import shutil

PER_REPORT = 50
STATUSES = ["absent", "implemented", "wired", "claimed", "uninspected"]


def record_id(n):
    return f"OBJ-{n:06d}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    run = os.path.join(args.out, "content", "big", "r1")
    os.makedirs(run)
    with open(os.path.join(args.out, "content", "big", "system.yaml"), "w") as f:
        f.write("name: Big system\n")
    with open(os.path.join(run, "run.yaml"), "w") as f:
        f.write("revision: 0123456789abcdef0123456789abcdef01234567\n"
                "sources:\n  - id: SRC-1\n    title: The repository\n"
                "    repository: https://github.com/example/big\n")
    n = args.records
    for r in range(0, n, PER_REPORT):
        lines = [f"---\ntitle: Report {r // PER_REPORT}\n---\n\n# Report {r // PER_REPORT}\n"]
        for i in range(r, min(r + PER_REPORT, n)):
            others = [rng.randrange(r, min(r + PER_REPORT, n)), rng.randrange(n), rng.randrange(n)]
            refs = ", ".join(record_id(o) for o in others if o != i)
            lines.append(
                f"\n### {record_id(i)} Component {i}\n\n"
                f"Label: Component {i}\n\n"
                f"It is built in SRC-1 src/mod{i % 97}/file{i}.py:{i % 400 + 1}-{i % 400 + 9} and used by {refs}.\n\n"
                f"- implementation conclusion status: {rng.choice(STATUSES)}\n"
                f"- operation conclusion status: {rng.choice(STATUSES)}\n")
        with open(os.path.join(run, f"report-{r // PER_REPORT:05d}.md"), "w") as f:
            f.write("".join(lines))


if __name__ == "__main__":
    main()
