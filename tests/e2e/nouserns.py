#!/usr/bin/python3
"""Run a command where user namespaces are denied (the container lane).

    nouserns.py COMMAND [ARG...]

A seccomp filter, inherited by everything COMMAND starts, makes unshare(2)
and clone(2) with CLONE_NEWUSER fail with EPERM and clone3(2) fail with
ENOSYS (its flags are in memory a filter cannot read; libc falls back to
clone). That is what a container runtime's default profile does to a
process without CAP_SYS_ADMIN: bwrap cannot start, and ward's Landlock
launcher cannot make a mount namespace to hide paths in. A mount namespace
alone (CLONE_NEWNS) stays possible for root, as in a container that has
CAP_SYS_ADMIN. x86_64 only (exit 77 elsewhere, so tests can skip).
"""
import ctypes
import os
import platform
import struct
import sys

if platform.machine() != "x86_64":
    sys.stderr.write("nouserns.py: x86_64 only\n")
    sys.exit(77)

NR_CLONE, NR_UNSHARE, NR_CLONE3 = 56, 272, 435
AUDIT_ARCH_X86_64 = 0xC000003E
CLONE_NEWUSER = 0x10000000
EPERM, ENOSYS = 1, 38
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL = 0x80000000
LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06


def stmt(code, k):
    return (code, 0, 0, k)


def jump(code, k, jt, jf):
    return (code, jt, jf, k)


prog = [
    stmt(LD_W_ABS, 4),  # seccomp_data.arch
    jump(JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
    stmt(RET_K, RET_KILL),
    stmt(LD_W_ABS, 0),  # seccomp_data.nr
    jump(JEQ_K, NR_CLONE3, 0, 1),
    stmt(RET_K, RET_ERRNO | ENOSYS),
    jump(JEQ_K, NR_UNSHARE, 1, 0),
    jump(JEQ_K, NR_CLONE, 0, 3),
    stmt(LD_W_ABS, 16),  # low half of args[0]: the flags
    jump(JSET_K, CLONE_NEWUSER, 0, 1),
    stmt(RET_K, RET_ERRNO | EPERM),
    stmt(RET_K, RET_ALLOW),
]
raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
buf = ctypes.create_string_buffer(raw, len(raw))


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


fprog = SockFprog(len(prog), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(
    PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0
) != 0:
    e = ctypes.get_errno()
    sys.stderr.write("nouserns.py: seccomp: %s\n" % os.strerror(e))
    sys.exit(125)
if len(sys.argv) < 2:
    sys.stderr.write("usage: nouserns.py COMMAND [ARG...]\n")
    sys.exit(125)
os.execvp(sys.argv[1], sys.argv[1:])
