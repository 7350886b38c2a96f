#!/usr/bin/env bash
# The shape of the code (issue 40, "Measure"): source lines per target, the two largest
# actors (lines in all their files, stored properties), unstructured tasks and task groups
# in Sources, duplicate pairs in Sources and in Tests (the `duplicates` tool, when present),
# and @Test functions per test target. Reads files only; prints a Markdown table.
#
# usage: Benchmarks/shape/report.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 - <<'PY'
import os, re, subprocess
def lines(path):
    with open(path, encoding="utf-8") as f: return sum(1 for _ in f)
def swift_files(root):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".swift"): yield os.path.join(d, f)
print("| target | files | lines |\n| --- | --- | --- |")
total = 0
for target in sorted(os.listdir("Sources")):
    files = list(swift_files(os.path.join("Sources", target)))
    if not files: continue
    n = sum(lines(f) for f in files); total += n
    print(f"| {target} | {len(files)} | {n:,} |")
print(f"| all | | {total:,} |\n")
# An actor's lines: its own file and every `Name+….swift` extension file beside it.
def actor(name, folder):
    files = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f == f"{name}.swift" or f.startswith(f"{name}+")]
    text = open(next(f for f in files if f.endswith(f"/{name}.swift")), encoding="utf-8").read()
    body = text[text.index(f"actor {name}"):]
    depth, props = 0, 0
    for line in body.splitlines():
        s = line.strip()
        if depth == 1 and re.match(r"(public |package |private |fileprivate |internal |nonisolated |private\(set\) |package\(set\) |public private\(set\) )*(let|var) \w+", s) and "{" not in s.split("=")[0]:
            props += 1
        depth += line.count("{") - line.count("}")
        if depth == 0 and "{" in body[:body.index(line) + len(line)]: break
    return sum(lines(f) for f in files), props, len(files)
for name, folder in [("XMPPSession", "Sources/XMPP"), ("RelayPipeline", "Sources/BridgeRelay")]:
    n, props, files = actor(name, folder)
    print(f"- `{name}`: {n:,} lines in {files} files, {props} stored properties")
src = "".join(open(f, encoding="utf-8").read() for f in swift_files("Sources"))
tasks = len(re.findall(r"(?<![.\w])Task(?:<[^>]*>)?\s*(?:\(|\{)", src))
groups = len(re.findall(r"with(?:Throwing|Discarding|ThrowingDiscarding)?TaskGroup\(", src))
print(f"- unstructured tasks in Sources: {tasks}; task groups: {groups}")
def dup(folder):
    try:
        out = subprocess.run(["duplicates", "--repo", folder, "--most", "1", "--seconds", "120"], capture_output=True, text=True).stdout
        m = re.match(r"(\d+) pairs", out)
        return m.group(1) if m else "?"
    except FileNotFoundError:
        return "(no duplicates tool)"
print(f"- duplicate pairs: Sources {dup('Sources')}, Tests {dup('Tests')}\n")
print("| test target | @Test functions |\n| --- | --- |")
for target in sorted(os.listdir("Tests")):
    n = sum(len(re.findall(r"^\s*@Test\b", open(f, encoding="utf-8").read(), re.M)) for f in swift_files(os.path.join("Tests", target)))
    if n: print(f"| {target} | {n} |")
PY
