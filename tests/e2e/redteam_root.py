#!/usr/bin/python3
"""Red-team vectors for what Landlock and bwrap do not govern by themselves
(tests/e2e/redteam_root.bats).

  redteam_root.py probe OUT_FILE IN_FILE SOCK_OUT ABSTRACT OLD_SOCK LINK
      run every vector once and print one line per vector:
      NAME=ok or NAME=<errno name>
  redteam_root.py serve PATH|@ABSTRACT
      a unix stream server that answers "hello" (the "daemon")
"""
import errno
import fcntl
import glob
import os
import socket
import struct
import sys

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_IOC_FSGETXATTR = 0x801C581F
FS_IOC_FSSETXATTR = 0x401C5820
FS_NOATIME_FL = 0x80


def name(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)


def attempt(label, fn):
    try:
        fn()
        print(label + "=ok")
    except OSError as e:
        print(label + "=" + name(e))


def setflags(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("l", 0))
        flags = struct.unpack("l", buf)[0]
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("l", flags ^ FS_NOATIME_FL))
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("l", flags))
    finally:
        os.close(fd)


def fssetxattr(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28))
        fcntl.ioctl(fd, FS_IOC_FSSETXATTR, buf)
    finally:
        os.close(fd)


def fchmod(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)


def metadata(suffix, path):
    st = os.stat(path)
    attempt("chmod_" + suffix, lambda: os.chmod(path, 0o666))
    attempt("fchmod_" + suffix, lambda: fchmod(path))
    attempt("chown_" + suffix, lambda: os.chown(path, st.st_uid, st.st_gid))
    attempt("setxattr_" + suffix, lambda: os.setxattr(path, "user.ward", b"1"))
    attempt("utime_" + suffix, lambda: os.utime(path, (0, 0)))
    attempt("setflags_" + suffix, lambda: setflags(path))
    attempt("fssetxattr_" + suffix, lambda: fssetxattr(path))


def connect(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect(addr)
        if s.recv(5) != b"hello":
            raise OSError(errno.EPROTO, "no greeting")
    finally:
        s.close()


def sendto(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", addr)
    finally:
        s.close()


def own_socket():
    path = "own-%d.sock" % os.getpid()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(path)
        srv.listen(1)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        c.close()
    finally:
        srv.close()
        os.unlink(path)


def cgroup_escape():
    """Write our pid into every cgroup.procs we can find: all must fail."""
    wrote = []
    for f in glob.glob("/sys/fs/cgroup/cgroup.procs") + glob.glob(
        "/sys/fs/cgroup/*/cgroup.procs"
    ) + glob.glob("/sys/fs/cgroup/*/*/cgroup.procs"):
        try:
            with open(f, "w") as fh:
                fh.write(str(os.getpid()))
            wrote.append(f)
        except OSError:
            pass
    if wrote:
        print("cgroup=ok " + " ".join(wrote))
    else:
        print("cgroup=refused")


def probe(out_file, in_file, sock_out, abstract, old_sock, link):
    metadata("out", out_file)
    # A symlink in the workspace to the file outside: chmod follows it.
    attempt("chmod_link", lambda: os.chmod(link, 0o666))
    if in_file != "-":
        metadata("in", in_file)
    attempt("connect_out", lambda: connect(sock_out))
    attempt("sendto_out", lambda: sendto(sock_out))
    attempt("connect_abstract", lambda: connect("\0" + abstract))
    attempt("connect_old", lambda: connect(old_sock))
    if in_file != "-":
        attempt("connect_own", own_socket)
    if not os.environ.get("RT_NO_CGROUP"):
        cgroup_escape()


def serve(where):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if where.startswith("@"):
        s.bind("\0" + where[1:])
    else:
        s.bind(where)
        os.chmod(where, 0o600)
    s.listen(16)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        try:
            c.sendall(b"hello")
        except OSError:
            pass
        c.close()


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(*sys.argv[2:8])
    elif sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit("usage: redteam_root.py probe|serve ...")
