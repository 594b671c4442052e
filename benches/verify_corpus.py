#!/usr/bin/env python3
"""A site and source repositories for timing `casebook verify` (docs/performance.md).

From a corpus made by gen_corpus.py, writes OUT/site (its content, each run frozen at the
commit of its system's generated repository) and OUT/clones/<host>/<owner>/<name>: one git
repository per system in which every quoted file holds each of its quotes at the cited
lines (other lines are filler), and every cited path exists. Usage:

    benches/verify_corpus.py CORPUS/casebook OUT
    casebook verify --root OUT/site --sources-dir OUT/clones
"""
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^```")
QUOTE_PATH = re.compile(r"^--- (?:(SRC-\d+) )?(\S+?)(?::(\d+)(?:-(\d+))?)?$")
# Any path with an extension (a folder or lines make it a citation), with or without
# `SRC-n`: a superset of what casebook reads as citations, so that every cited file exists.
CITED = re.compile(r"((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.[a-z]{1,5})(?::(\d+)(?:[-–](\d+))?)?")
REVISION = re.compile(r"^revision: .*$", re.M)
REPOSITORY = re.compile(r"repository: https://([^/\s]+)/([^/\s]+)/([^/\s]+)")


def quotes_and_citations(markdown):
    """(path, first line or None, code lines) of each quote; (path, last line) of each citation."""
    quotes, citations = [], []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            start = i + 1
            j = start
            while j < len(lines) and not FENCE.match(lines[j]):
                j += 1
            code = lines[start:j]
            k = j + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            m = QUOTE_PATH.match(lines[k]) if k < len(lines) else None
            if m:
                quotes.append((m.group(2), int(m.group(3)) if m.group(3) else None, code))
            i = j + 1
            continue
        for m in CITED.finditer(lines[i]):
            end = m.group(3) or m.group(2)
            citations.append((m.group(1), int(end) if end else 0))
        i += 1
    return quotes, citations


def file_text(placed, cited_end):
    """Lines holding each (first line, code) at its place; filler elsewhere."""
    out = []
    for first, code in sorted(placed, key=lambda q: (q[0] is None, q[0] or 0)):
        at = first if first is not None and first > len(out) else len(out) + 1
        while len(out) < at - 1:
            out.append(f"# filler line {len(out) + 1}")
        out.extend(code)
    while len(out) < cited_end:
        out.append(f"# filler line {len(out) + 1}")
    return "\n".join(out) + "\n"


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    base = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", "-c", "init.defaultBranch=main"]
    return subprocess.run(base + list(args), cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def main(corpus, out):
    content = os.path.join(corpus, "content")
    site = os.path.join(out, "site")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(content, os.path.join(site, "content"))
    for system in sorted(os.listdir(os.path.join(site, "content"))):
        system_dir = os.path.join(site, "content", system)
        if not os.path.isdir(system_dir):
            continue
        files, ends, repository = {}, {}, None
        runs = sorted(d for d in os.listdir(system_dir) if os.path.isdir(os.path.join(system_dir, d)))
        for run in runs:
            run_dir = os.path.join(system_dir, run)
            with open(os.path.join(run_dir, "run.yaml")) as f:
                m = REPOSITORY.search(f.read())
                repository = repository or (m and m.groups())
            for name in sorted(os.listdir(run_dir)):
                if name.endswith(".md"):
                    with open(os.path.join(run_dir, name)) as f:
                        quotes, citations = quotes_and_citations(f.read())
                    for path, first, code in quotes:
                        files.setdefault(path, []).append((first, code))
                    for path, end in citations:
                        files.setdefault(path, [])
                        ends[path] = max(ends.get(path, 0), end)
        if repository is None:
            continue
        repo = os.path.join(out, "clones", *repository)
        os.makedirs(repo)
        git(repo, "init", "-q")
        for path, placed in files.items():
            target = os.path.join(repo, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write(file_text(placed, ends.get(path, 0)))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "the analysed source")
        commit = git(repo, "rev-parse", "HEAD")
        for run in runs:
            path = os.path.join(system_dir, run, "run.yaml")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(REVISION.sub(f"revision: {commit}", text, count=1))
    print(f"casebook verify --root {site} --sources-dir {os.path.join(out, 'clones')}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
