#!/usr/bin/env python3
"""Regenerates rockcache.conf from the option table: config/config.cc (rockcache's options) and
config/redis_options.cc (Redis 7.0's parameters, each mapped, reported or stored without effect).

Usage: python3 scripts/generate-conf.py            (writes rockcache.conf at the repository root)
Run after adding or changing an option; the unit test "rockcache.conf documents every option at
its default" fails until the file matches the table.
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
row = re.compile(r'\{"([a-z0-9_-]+)",\s*T::(\w+),\s*"([^"]*)",\s*[^,]+,\s*[^,]+,\s*'
                 r'(?:nullptr|((?:"[^"]*"\s*)+)),\s*(true|false),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)'
                 r'(?:,\s*(kMapped|kReported|kNoEffect)(?:,\s*"([^"]*)")?)?\s*\}')
literal = re.compile(r'"((?:[^"\\]|\\.)*)"')
section = re.compile(r'// ---- (.+) ----')
out = [
    "# rockcache.conf — every option rockcache knows, at its built-in default.",
    "#",
    "# Syntax as redis.conf: `name value`, `#` comments, \"quoted strings\", sizes like 512mb",
    "# (k = 1000, kb = 1024, m, mb, g, gb). Start with: build/rockcache-server rockcache.conf",
    "# Any option can also be given on the command line (--port 6380), which wins over this file.",
    "# Options marked [runtime] can be changed while running with CONFIG SET.",
    "#",
    "# Every parameter of Redis 7.0's redis.conf is accepted too, in one of three kinds:",
    "#   [Redis name of X]   the same setting as rockcache's option X (shown commented out here);",
    "#   [reported]          a fact about rockcache (appendonly yes): only that value is accepted;",
    "#   [no effect]         validated and stored as Redis does, shown by CONFIG GET, used by nothing",
    "#                       (except where its line says what reads it).",
    "# (Generated from config/config.cc and config/redis_options.cc by scripts/generate-conf.py.)",
    "",
]
for source in ("config.cc", "redis_options.cc"):
    src = (root / "config" / source).read_text()
    items = sorted([(m.start(), "row", m) for m in row.finditer(src)] +
                   [(m.start(), "section", m) for m in section.finditer(src)], key=lambda t: t[0])
    for _, kind, m in items:
        if kind == "section":
            out += ["#" * 3 + " " + m.group(1) + " " + "#" * 3, ""]
            continue
        name, typ, default, choices, runtime, doc, okind, target = m.groups()
        doc = "".join(literal.findall(doc))  # several adjacent literals are one string
        choices = "".join(literal.findall(choices)) if choices else choices
        out.append("# " + doc.replace('\\"', '"'))
        extra = []
        if okind == "kMapped":
            extra.append("[Redis name of " + target + "]")
        elif okind == "kReported":
            extra.append("[reported]")
        elif okind == "kNoEffect":
            extra.append("[no effect]")
        if choices:
            extra.append("one of: " + choices.replace("|", ", "))
        if runtime == "true":
            extra.append("[runtime]")
        out.append("# " + "; ".join(extra) if extra else None)
        if out[-1] is None:
            out.pop()
        if okind == "kMapped":
            out.append(f"# {name} <value of {target}>")
        else:
            out.append(f"{name} {default if default else chr(34) * 2}")
        out.append("")
(root / "rockcache.conf").write_text("\n".join(out))
