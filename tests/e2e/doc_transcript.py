#!/usr/bin/env python3
"""Run a shell transcript from the docs and check it, for doc_examples.bats.

Usage: doc_transcript.py [--sub FROM=TO]... [--runner NAME] < TEXT

TEXT is an example block as tests/e2e/doc_examples.py extracts it: lines
"$ COMMAND" (a trailing backslash continues it on the next line), lines
that start with "#" (alone or indented: comments), and the output the
docs show for the command above them. Every command runs, in order, in one
bash (so `id=$(...)` and `$?` carry over) in a terminal: a prompt "[y/N]"
is answered "y", like the person the example shows.

Checked, for each command:
  - the output, when the example shows one: the lines ward and the command
    print (ward's "warning:" lines aside) are exactly those shown, after
    each --sub (the example's /home/u becomes the test's home, ...); when
    --runner is landlock, bwrap's "Read-only file system" reads
    "Permission denied";
  - the exit status: 0, unless the command's comment says "denied" (then
    not 0) or the next command is `echo $?` (its output is checked).

Prints one line per command ("ok"/"FAIL", the command, and for a failure
what differed) and exits 1 when any failed.
"""
import os
import pty
import re
import select
import sys
import time

MARK = "@@WARD-DOC"


def parse(text):
    """[(command, comment, [expected lines])]"""
    cmds, cont = [], None
    for line in text.splitlines():
        if cont is not None:
            cont += "\n" + line
            if not line.endswith("\\"):
                cmds.append([cont, [], ])
                cont = None
            continue
        if line.startswith("$ "):
            if line.endswith("\\"):
                cont = line[2:]
            else:
                cmds.append([line[2:], []])
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        elif cmds:
            cmds[-1][1].append(line)
        else:
            sys.exit(f"output before any command: {line!r}")
    out = []
    for cmd, expected in cmds:
        m = re.search(r"\s#\s*(.*)$", cmd.split("\n")[-1])
        out.append((cmd, m.group(1) if m else "", expected))
    return out


def script(cmds):
    lines = ["__s=0"]
    for i, (cmd, _, _) in enumerate(cmds):
        lines.append(f"printf '\\n{MARK} {i}\\n'; ( exit $__s )")
        lines.append(cmd)
        lines.append(f"__s=$?; printf '\\n{MARK}-STATUS %d\\n' $__s")
    return "\n".join(lines) + "\n"


def run_in_terminal(src, timeout=120):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("bash", ["bash", "--noprofile", "--norc", "-c", src])
    out, pending, end = b"", b"", time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        pending += chunk
        if pending.rstrip().endswith(b"[y/N]"):
            os.write(fd, b"y\n")
            pending = b""
        elif len(pending) > 4096:
            pending = pending[-4096:]
    else:
        os.kill(pid, 9)
        sys.exit("the transcript did not finish in %d s" % timeout)
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace").replace("\r", "")


def main():
    subs, runner, args = [], None, sys.argv[1:]
    while args:
        if args[0] == "--sub":
            a, b = args[1].split("=", 1)
            subs.append((a, b))
            args = args[2:]
        elif args[0] == "--runner":
            runner, args = args[1], args[2:]
        else:
            sys.exit(f"unknown argument {args[0]}")
    cmds = parse(sys.stdin.read())
    if not cmds:
        sys.exit("no command in the example")
    raw = run_in_terminal(script(cmds))
    parts = re.split(rf"\n?{MARK} (\d+)\n", raw)
    got = {}
    for i in range(1, len(parts) - 1, 2):
        body = parts[i + 1]
        m = re.search(rf"\n?{MARK}-STATUS (\d+)\n?", body)
        status = int(m.group(1)) if m else None
        body = body[: m.start()] if m else body
        got[int(parts[i])] = (status, body)
    failed = 0
    for i, (cmd, comment, expected) in enumerate(cmds):
        status, body = got.get(i, (None, ""))
        lines = [l for l in body.split("\n")
                 if l and not re.match(r"^ward( [a-z]+)?: warning: ", l)]
        problems = []
        if status is None:
            problems.append("did not finish")
        nxt = cmds[i + 1][0] if i + 1 < len(cmds) else ""
        if nxt.strip() == "echo $?" or status is None:
            pass
        elif "denied" in comment:
            if status == 0:
                problems.append("exited 0, the example says it is denied")
        elif status != 0:
            problems.append(f"exited {status}")
        if expected:
            want = []
            for l in expected:
                for a, b in subs:
                    l = l.replace(a, b)
                if runner == "landlock":
                    l = l.replace("Read-only file system", "Permission denied")
                want.append(l)
            if lines != want:
                problems.append("printed:\n    " + "\n    ".join(lines) +
                                "\n  the example shows:\n    " +
                                "\n    ".join(want))
        one = cmd.replace("\\\n", " ").replace("\n", " ")
        if problems:
            failed += 1
            print(f"FAIL $ {one}\n  " + "\n  ".join(problems))
            print("  output:\n    " + "\n    ".join(body.split("\n")))
        else:
            print(f"ok   $ {one}")
    sys.exit(1 if failed else 0)


main()
