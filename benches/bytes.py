#!/usr/bin/env python3
"""Where a built site's bytes go: `python3 benches/bytes.py OUTPUT`.

Per kind of file (record pages, report pages, run pages, other pages, the search indexes,
the manifest, assets): how many files and bytes. For the HTML pages, how their bytes
split between the chrome (everything outside <main>), the record graph (<figure
class="graph"> and its table), highlighted code (<pre class="code">), tables, and the
rest of the main content. Standard library only; reads the files once.
"""
import os
import re
import sys
from collections import defaultdict

PARTS = [
    ("graph", re.compile(r'<section class="links">.*?</section>', re.S)),
    ("code", re.compile(r'<pre class="code".*?</pre>', re.S)),
    ("tables", re.compile(r"<table.*?</table>", re.S)),
]


def kind_of(rel):
    if rel.startswith("search/"):
        return "search index"
    if rel.endswith("records.json"):
        return "manifest"
    if rel.startswith("assets/") or not rel.endswith(".html"):
        return "other files"
    parts = rel.split("/")
    if "records" in parts[:-1]:
        return "record pages"
    if len(parts) == 4 and parts[-1] == "index.html" and parts[0] not in ("statuses",):
        return "report pages"
    if len(parts) == 3 and parts[-1] == "index.html" and parts[0] != "statuses":
        return "run pages"
    return "other pages"


def main(out):
    files = defaultdict(lambda: [0, 0])
    split = defaultdict(lambda: defaultdict(int))
    for root, _, names in os.walk(out):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, out)
            size = os.path.getsize(path)
            kind = kind_of(rel)
            files[kind][0] += 1
            files[kind][1] += size
            if not rel.endswith(".html"):
                continue
            html = open(path, encoding="utf-8").read()
            start, end = html.find("<main"), html.rfind("</main>")
            if start < 0 or end < 0:
                continue
            main_part = html[start:end]
            parts = split[kind]
            parts["chrome"] += len(html.encode()) - len(main_part.encode())
            rest = main_part
            for name, pattern in PARTS:
                found = pattern.findall(rest)
                parts[name] += sum(len(f.encode()) for f in found)
                rest = pattern.sub("", rest)
            parts["rest of main"] += len(rest.encode())
    total = sum(b for _, b in files.values())
    print(f"{'kind':<16} {'files':>8} {'MB':>9} {'share':>7}")
    for kind, (count, size) in sorted(files.items(), key=lambda kv: -kv[1][1]):
        print(f"{kind:<16} {count:>8} {size / 1e6:>9.1f} {100 * size / total:>6.1f}%")
    print(f"{'all':<16} {sum(c for c, _ in files.values()):>8} {total / 1e6:>9.1f}")
    print()
    print("HTML pages, by part (MB):")
    names = ["chrome", "graph", "code", "tables", "rest of main"]
    print(f"{'kind':<16} " + " ".join(f"{n:>12}" for n in names))
    for kind, parts in sorted(split.items()):
        print(f"{kind:<16} " + " ".join(f"{parts[n] / 1e6:>12.1f}" for n in names))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "public")
