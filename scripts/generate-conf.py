#!/usr/bin/env python3
"""Regenerates rockcache.conf from the option table in config/config.cc.

Run after adding or changing an option; the unit test "rockcache.conf documents every option at
its default" fails until the file matches the table.
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
src = (root / "config" / "config.cc").read_text()
row = re.compile(r'\{"([a-z-]+)", T::(\w+), "([^"]*)", [^,]+, [^,]+, (?:nullptr|"([^"]*)"), '
                 r'(true|false),\s*"((?:[^"\\]|\\.)*)"\}')
section = re.compile(r'// ---- (.+) ----')
out = [
    "# rockcache.conf — every option rockcache knows, at its built-in default.",
    "#",
    "# Syntax as redis.conf: `name value`, `#` comments, \"quoted strings\", sizes like 512mb",
    "# (k = 1000, kb = 1024, m, mb, g, gb). Start with: build/rockcache-server rockcache.conf",
    "# Any option can also be given on the command line (--port 6380), which wins over this file.",
    "# Options marked [runtime] can be changed while running with CONFIG SET.",
    "# (Generated from config/config.cc by scripts/generate-conf.py.)",
    "",
]
pos = 0
items = sorted([(m.start(), "row", m) for m in row.finditer(src)] +
               [(m.start(), "section", m) for m in section.finditer(src)], key=lambda t: t[0])
for _, kind, m in items:
    if kind == "section":
        out += ["#" * 3 + " " + m.group(1) + " " + "#" * 3, ""]
        continue
    name, typ, default, choices, runtime, doc = m.groups()
    out.append("# " + doc.replace('\\"', '"'))
    extra = []
    if choices:
        extra.append("one of: " + choices.replace("|", ", "))
    if runtime == "true":
        extra.append("[runtime]")
    if extra:
        out.append("# " + "; ".join(extra))
    out.append(f"{name} {default if default else chr(34) * 2}")
    out.append("")
(root / "rockcache.conf").write_text("\n".join(out))
