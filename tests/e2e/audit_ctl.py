#!/usr/bin/env python3
"""Read or set whether the kernel's audit is enabled (for report.bats).

Usage: audit_ctl.py status | set 0|1
Prints the state ("0" or "1") that was in force before; exits 2 when the
audit netlink cannot be used (not root, no audit in the kernel).
"""
import socket
import struct
import sys

NETLINK_AUDIT, AUDIT_GET, AUDIT_SET, AUDIT_STATUS_ENABLED = 9, 1000, 1001, 1


def request(sock, typ, payload=b""):
    sock.sendto(struct.pack("=LHHLL", 16 + len(payload), typ, 1 | 4, 1, 0) + payload, (0, 0))


def status(sock):
    request(sock, AUDIT_GET)
    while True:
        data = sock.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ = struct.unpack_from("=LH", data, off)
            if typ == AUDIT_GET:
                return struct.unpack_from("=LL", data, off + 16)[1]
            if typ == 2:  # NLMSG_ERROR
                err = struct.unpack_from("=i", data, off + 16)[0]
                if err:
                    raise OSError(-err, "AUDIT_GET")
            off += (ln + 3) & ~3


def main():
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_AUDIT)
        sock.bind((0, 0))
        before = status(sock)
        if sys.argv[1] == "set":
            payload = struct.pack("=LL", AUDIT_STATUS_ENABLED, int(sys.argv[2])) + b"\0" * 32
            request(sock, AUDIT_SET, payload)
            if status(sock) != int(sys.argv[2]):
                raise OSError(1, "AUDIT_SET did not take")
    except OSError as e:
        print(f"audit: {e}", file=sys.stderr)
        sys.exit(2)
    print(1 if before else 0)


main()
