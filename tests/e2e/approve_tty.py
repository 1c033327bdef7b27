#!/usr/bin/env python3
"""Answer ward's terminal approval prompt like a careful person would.

    approve_tty.py [--repeat N] [--allow-if TEXT] [--transcript FILE] -- ARGV...

Runs ARGV (a `ward run|fs ... --escalate ...` command, possibly behind
setpriv) in a new pseudo-terminal, N times (default 1). Each time it waits
for the question (a line ending in "[y/N] ", at most 30 s), answers "y"
when the text shown contains TEXT (always, without --allow-if) and "n"
otherwise, and reads the rest until the command ends. The prompt discards
what is typed before it is shown, so the answer is written only after the
question. Prints one line per run (its exit status and whether it was
allowed) and, last, "asked A allowed Y refused R"; --transcript writes
every text seen (\\r removed). Exits 0 when every run was asked, 1
otherwise. No timing decides anything: every wait is bounded, a run that
is never asked is killed and counted.
"""
import argparse
import os
import pty
import select
import signal
import sys
import time

QUESTION = b"[y/N] "


def read_until(fd, want, deadline):
    """Read from @fd until @want appears (return the text) or the end."""
    buf = b""
    while want not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            return buf, False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            return buf, False
        if not chunk:
            return buf, False
        buf += chunk
    return buf, True


def drain(fd, pid, deadline):
    """Read from @fd until @pid exits (what it started may keep the
    terminal open: that is no reason to wait), then what is left.
    Returns the text and the wait status (None when it never exited)."""
    buf, status = b"", None
    while status is None and time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        r, _, _ = select.select([fd], [], [], 0 if done else 0.05)
        while r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            r, _, _ = select.select([fd], [], [], 0)
    return buf, status


def one(argv, allow_if):
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    deadline = time.monotonic() + 30
    seen, asked = read_until(fd, QUESTION, deadline)
    allowed, status = False, None
    if asked:
        allowed = allow_if is None or allow_if.encode() in seen
        os.write(fd, b"y\n" if allowed else b"n\n")
        rest, status = drain(fd, pid, time.monotonic() + 60)
        seen += rest
    if status is None:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    os.close(fd)
    code = os.waitstatus_to_exitcode(status)
    return code, asked, allowed, seen.replace(b"\r", b"")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--allow-if")
    ap.add_argument("--transcript")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = a.argv[1:] if a.argv and a.argv[0] == "--" else a.argv
    if not argv:
        ap.error("no command")
    counts = {"asked": 0, "allowed": 0, "refused": 0}
    exits = {}
    out = open(a.transcript, "wb") if a.transcript else None
    for i in range(a.repeat):
        code, asked, allowed, seen = one(argv, a.allow_if)
        counts["asked"] += asked
        counts["allowed"] += allowed
        counts["refused"] += asked and not allowed
        if allowed:
            exits[code] = exits.get(code, 0) + 1
        if out:
            out.write(seen)
        if a.repeat == 1 or not asked:
            print(f"run {i}: exit {code}, {'allowed' if allowed else 'not allowed'}"
                  f"{'' if asked else ' (never asked)'}")
    print("allowed runs by exit status: " +
          (" ".join(f"{k}:{v}" for k, v in sorted(exits.items())) or "none"))
    print(f"asked {counts['asked']} allowed {counts['allowed']} "
          f"refused {counts['refused']}")
    if out:
        out.close()
    sys.exit(0 if counts["asked"] == a.repeat else 1)


if __name__ == "__main__":
    main()
