#!/usr/bin/python3
"""Check that ward's documentation says what ward does.

Usage: docs_check.py WARD LANDLOCK_RUN CHECK

  options   every command's options three ways: its --help, the
            completion ward generates from its option tables (the ones
            getopt reads), and the OPTIONS section of its man page; each
            pair must agree in both directions
  codes     every code of a --json error object in the sources
            (CLI_ERR("...")) is documented in man/ward.1's JSON ERRORS,
            and every code documented there is emitted

Prints one line per problem and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPT = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")

problems = []


def run(argv, stdin=None):
    p = subprocess.run(argv, capture_output=True, text=True, input=stdin)
    return p.returncode, p.stdout, p.stderr


def help_options(argv, indent=None):
    """The options a --help text lists, from its option sections.

    An option line starts with 2 spaces and '-', or 6 spaces and '--'; its
    description follows after a run of 2+ spaces. Subcommand lines (in a
    'Subcommands:' section) may carry their own options in brackets.
    """
    rc, out, err = run(argv + ["--help"])
    if rc != 0:
        problems.append(f"{' '.join(argv)} --help exits {rc}: {err.strip()}")
        return set()
    found, section = set(), None
    for line in out.splitlines():
        if indent is not None:
            # A help text without sections (landlock-run): every line
            # that starts with @indent spaces and an option.
            if re.match(r"^ {%d}-" % indent, line):
                spec = re.split(r"\s{2,}", line.strip())[0]
                found |= set(OPT.findall(spec))
            continue
        if line and not line.startswith(" "):
            section = line.rstrip(":").strip()
            continue
        if section in ("Options", "Advanced"):
            m = re.match(r"^(  -| {6}--)(.*)$", line)
            if not m:
                continue
            spec = re.split(r"\s{2,}", (m.group(1) + m.group(2)).strip())[0]
            found |= set(OPT.findall(spec))
        elif section == "Subcommands":
            m = re.match(r"^  \S", line)
            if m:
                spec = re.split(r"\s{2,}", line.strip())[0]
                found |= set(OPT.findall(spec))
    return found


def troff_text(s):
    s = s.replace("\\-", "-").replace("\\(em", "-").replace('"', " ")
    s = re.sub(r"\\f[BIRP]", " ", s)
    s = re.sub(r"^\.\w+\s*", "", s)
    return s


def man_options(page):
    """Options in the tags (the line after .TP / .TQ) of OPTIONS sections."""
    found, in_opts, tag_next = set(), False, False
    with open(os.path.join(ROOT, "man", page)) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".SH"):
                in_opts = line.strip() == ".SH OPTIONS"
                continue
            if not in_opts:
                continue
            if line in (".TP", ".TQ"):
                tag_next = True
                continue
            if tag_next:
                tag_next = False
                found |= {o for o in OPT.findall(troff_text(line))
                          if o != "--"}
    return found


def completion_options(ward, words):
    """What the bash completion offers after 'ward WORDS... -'."""
    script = run([ward, "completion", "bash"])[1]
    prog = script + "\n" + (
        'COMP_WORDS=(ward "$@" -); COMP_CWORD=$(($# + 1)); _ward; '
        'printf "%s\\n" "${COMPREPLY[@]}"\n')
    rc, out, err = run(["bash", "-c", prog, "bash"] + words)
    if rc != 0:
        problems.append(f"completion for {words} failed: {err.strip()}")
    return set(out.split())


def compare(what, a_name, a, b_name, b):
    for o in sorted(a - b):
        problems.append(f"{what}: {o} is in {a_name} but not in {b_name}")
    for o in sorted(b - a):
        problems.append(f"{what}: {o} is in {b_name} but not in {a_name}")


def check_options(ward, launcher):
    rc, out, _ = run([ward, "--help"])
    commands = []
    section = None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            section = line.rstrip(":")
            continue
        if section == "Commands" and line.strip():
            commands.append(line.split()[0])
    if len(commands) < 8:
        problems.append(f"ward --help lists only {commands}")
    # The man page that documents each command's options.
    page_of = {"fs": "ward-fs.1", "session": "ward-session.1",
               "mcp": "ward-mcp.1", "quarantine": "ward-quarantine.1",
               "acp": "ward-acp.1"}
    per_page = {}
    top = help_options([ward])
    compare("ward", "ward --help", top, "its completion",
            completion_options(ward, []))
    per_page.setdefault("ward.1", set()).update(top)
    for cmd in commands:
        if cmd == "help":
            # `ward help --help` is ward's own --help (checked above).
            continue
        h = help_options([ward, cmd])
        if cmd == "config":
            h |= help_options([ward, "config", "check"])
        # Completion, subcommand by subcommand where there are some.
        script = run([ward, "completion", "bash"])[1]
        m = re.search(r"^\t'%s'\)\n\t\t_ward_opts='[^']*'\n\t\t_ward_args="
                      r"'[^']*'\n\t\t_ward_operands='[^']*'\n\t\t"
                      r"_ward_subs='([^']*)'" % re.escape(cmd), script, re.M)
        subs = m.group(1).split() if m and m.group(1) else []
        c = set()
        for sub in subs or [None]:
            c |= completion_options(ward, [cmd] + ([sub] if sub else []))
        compare(f"ward {cmd}", "--help", h, "the completion (option table)", c)
        per_page.setdefault(page_of.get(cmd, "ward.1"), set()).update(h)
    per_page["landlock-run.1"] = help_options([launcher], indent=2)
    for page, opts in sorted(per_page.items()):
        compare(page, "the --help texts", opts, "the man page's OPTIONS",
                man_options(page))


def check_codes():
    emitted = set()
    # (libward's subsystems are folders of src/libward: every file below.)
    for top in ("src/cli", "src/mcp", "src/libward", "src/util"):
        for d, _, names in sorted(os.walk(os.path.join(ROOT, top))):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, name)
                text = open(path).read()
                emitted |= set(re.findall(r'CLI_ERR\("([A-Z][A-Z0-9_]*)"\)',
                                          text))
                # A code not written through CLI_ERR would escape this
                # check.
                for m in re.finditer(r'(cli_json_error\(\s*|"error",\s*'
                                     r'json_string\(\s*)"', text):
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{os.path.relpath(path, ROOT)}:{line}: "
                                    "a JSON error code not written as "
                                    "CLI_ERR(\"...\")")
    if len(emitted) < 10:
        problems.append(f"only {sorted(emitted)} found as CLI_ERR codes")
    page = open(os.path.join(ROOT, "man", "ward.1")).read()
    m = re.search(r"^\.SH JSON ERRORS\n(.*?)^\.SH ", page, re.S | re.M)
    if not m:
        problems.append("man/ward.1 has no JSON ERRORS section")
        return
    documented = set()
    for line in m.group(1).splitlines():
        if line.startswith(".B "):
            documented |= set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b",
                                         troff_text(line)))
    documented -= {"JSON"}
    compare("JSON error codes", "the sources", emitted,
            "man/ward.1 JSON ERRORS", documented)


def main():
    ward, launcher, what = sys.argv[1], sys.argv[2], sys.argv[3]
    if what == "options":
        check_options(ward, launcher)
    elif what == "codes":
        check_codes()
    else:
        sys.exit(f"unknown check {what}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
