#!/usr/bin/env python3
"""Print the examples of a document as JSON, for tests/e2e/config_examples.bats.

Usage: doc_examples.py FILE

A Markdown file gives its fenced blocks (``` with an info string); a man
page (roff) its .EX/.EE blocks, unescaped. Each block is
{"line": N, "lang": L, "text": T}. A roff block's language is guessed:
"console" when its lines start with "$ ", "yaml" when its first line is a
comment naming a config.yml, else "text".
"""
import json
import re
import sys


def markdown(text):
    blocks, lang, start, body = [], None, 0, []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^```(\S*)\s*$", line)
        if m and lang is None:
            lang, start, body = m.group(1) or "", n, []
        elif m and lang is not None and m.group(1) == "":
            blocks.append({"line": start, "lang": lang, "text": "\n".join(body) + "\n"})
            lang = None
        elif lang is not None:
            body.append(line)
    if lang is not None:
        sys.exit(f"unterminated fenced block at line {start}")
    return blocks


def unroff(line):
    repl = [(r"\(dq", '"'), (r"\(em", "—"), (r"\-", "-"), (r"\e", "\\"),
            (r"\\", "\\"), (r"\&", "")]
    for a, b in repl:
        line = line.replace(a, b)
    return line


def roff(text):
    blocks, start, body = [], None, []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(".EX"):
            start, body = n, []
        elif line.startswith(".EE") and start is not None:
            lines = [unroff(b) for b in body]
            if all(l.startswith("$ ") for l in lines if l.strip()):
                lang = "console"
            elif lines and re.match(r"^# .*config\.yml", lines[0]):
                lang = "yaml"
            else:
                lang = "text"
            blocks.append({"line": start, "lang": lang, "text": "\n".join(lines) + "\n"})
            start = None
        elif start is not None:
            body.append(line)
    return blocks


def main():
    path = sys.argv[1]
    text = open(path, encoding="utf-8").read()
    blocks = markdown(text) if path.endswith(".md") else roff(text)
    json.dump(blocks, sys.stdout)


main()
