#!/usr/bin/python3
"""ward_opens.py LOG REGEX — the files ward's own code opened.

LOG is `strace -f -e trace=openat,open,execve,clone,clone3,fork,vfork`
output of one ward command. The processes ward starts run other programs
(bwrap, landlock-run, the command) from their execve() on, and everything
those programs start is theirs too; what remains is ward's own code: the
first process, its threads, and its children until they exec. Prints every
path ward's code opened (successfully or not) that matches REGEX, one a
line, and exits 1 when there is one.
"""
import re
import sys

LINE = re.compile(r"^(\d+)\s+(.*)$")
CLONE = re.compile(r"^(?:<\.\.\. )?(clone3?|fork|vfork)\b.*= (\d+)")
EXEC = re.compile(r"^(?:execve\(.*\)|<\.\.\. execve resumed>.*) = 0$")
OPEN = re.compile(r'^(?:openat\([^,]+, |open\()"([^"]*)"')


def main():
    log, pattern = sys.argv[1], re.compile(sys.argv[2])
    lines = []
    for raw in open(log, errors="replace"):
        m = LINE.match(raw.rstrip("\n"))
        if m:
            lines.append((int(m.group(1)), m.group(2)))
    if not lines:
        sys.exit(f"ward_opens.py: {log}: nothing traced")
    first = lines[0][0]
    parent, born, exec_at = {}, {}, {}
    for i, (pid, call) in enumerate(lines):
        m = CLONE.match(call)
        if m:
            parent[int(m.group(2))] = pid
            born[int(m.group(2))] = i
        elif EXEC.match(call) and pid not in exec_at:
            exec_at[pid] = i
    # ward's own execve, the first line, is not a foreign program.
    if exec_at.get(first) == 0:
        del exec_at[first]

    def foreign(pid, i):
        """Whether line @i of @pid runs a program other than ward."""
        if pid in exec_at and i >= exec_at[pid]:
            return True
        if pid == first or pid not in parent:
            return False
        return foreign(parent[pid], born[pid])

    hits = []
    for i, (pid, call) in enumerate(lines):
        m = OPEN.match(call)
        if m and pattern.search(m.group(1)) and not foreign(pid, i):
            hits.append(f"{pid}: {m.group(1)}")
    if hits:
        print("\n".join(hits))
    sys.exit(1 if hits else 0)


main()
