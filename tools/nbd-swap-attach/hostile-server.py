#!/usr/bin/env python3
"""A deliberately broken NBD server for the host tests of nbd-swap-attach.

    hostile-server.py MODE     listens on 127.0.0.1 (a free port), prints the
                               port on the first line of stdout, answers every
                               connection the way MODE says; exits after 30 s.

Each mode breaks one step of the handshake (doc/proto.md of NetworkBlockDevice/nbd)
or serves a well-formed export the client must refuse. Loopback only, bounded in
time; it never reads more than it needs.
"""
import socket
import struct
import sys
import threading
import time

NBDMAGIC = b"NBDMAGIC"
IHAVEOPT = 0x49484156454F5054
OLDSTYLE = 0x00420281861253
REPMAGIC = 0x3E889045565A9
FIXED, NOZEROES = 1, 2
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO = 1, 2, 7
REP_ACK, REP_SERVER, REP_INFO = 1, 2, 3
ERR = 1 << 31
ERR_UNSUP, ERR_POLICY, ERR_TLS_REQD, ERR_UNKNOWN = ERR | 1, ERR | 2, ERR | 5, ERR | 6
INFO_EXPORT, INFO_BLOCK_SIZE = 0, 3
SIZE = 64 << 20
TFLAGS = 1 | 4 | (1 << 8)  # HAS_FLAGS, SEND_FLUSH, CAN_MULTI_CONN
LIFETIME = 30


def recvn(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def hello(s, hsflags=FIXED | NOZEROES):
    s.sendall(NBDMAGIC + struct.pack(">QH", IHAVEOPT, hsflags))
    return struct.unpack(">I", recvn(s, 4))[0]


def read_option(s):
    magic, opt, length = struct.unpack(">QII", recvn(s, 16))
    data = recvn(s, min(length, 65536))
    return opt, data


def reply(s, opt, rtype, data=b"", magic=REPMAGIC, length=None):
    s.sendall(struct.pack(">QIII", magic, opt, rtype, len(data) if length is None else length) + data)


def info_export(size=SIZE, flags=TFLAGS):
    return struct.pack(">HQH", INFO_EXPORT, size, flags)


def go_ok(s, size=SIZE, flags=TFLAGS, extra=()):
    opt, _ = read_option(s)
    for e in extra:
        reply(s, opt, REP_INFO, e)
    reply(s, opt, REP_INFO, info_export(size, flags))
    reply(s, opt, REP_ACK)


def linger(s):
    """Stay connected, reading until the client goes away."""
    s.settimeout(LIFETIME)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass


def serve(mode, s, n):
    if mode == "garbage":
        s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
    elif mode == "close":
        pass
    elif mode == "silent":
        linger(s)
    elif mode == "drip":  # one byte at a time, never finishing the greeting
        for b in NBDMAGIC + b"IHAVEOP":
            s.sendall(bytes([b]))
            time.sleep(0.4)
    elif mode == "oldstyle":
        s.sendall(NBDMAGIC + struct.pack(">QQI", OLDSTYLE, SIZE, 1) + bytes(124))
    elif mode == "bad-opts-magic":
        s.sendall(NBDMAGIC + struct.pack(">QH", 0x1122334455667788, 3))
    elif mode == "trunc-greeting":
        s.sendall(NBDMAGIC + b"IHAV")
    elif mode == "reply-bad-magic":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, REP_ACK, magic=0xDEADBEEF)
    elif mode == "reply-wrong-option":
        hello(s)
        read_option(s)
        reply(s, 5, REP_ACK)
    elif mode == "reply-huge":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, REP_INFO, b"\0\0", length=0xFFFFFFFF)
    elif mode == "reply-trunc":
        hello(s)
        opt, _ = read_option(s)
        s.sendall(struct.pack(">QIII", REPMAGIC, opt, REP_INFO, 12) + b"\0\0\0\0\0")
    elif mode == "info-bad-length":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, REP_INFO, struct.pack(">HQ", INFO_EXPORT, SIZE))
    elif mode == "ack-without-info":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, REP_ACK)
    elif mode == "info-flood":
        hello(s)
        opt, _ = read_option(s)
        try:
            for _ in range(100000):
                reply(s, opt, REP_INFO, struct.pack(">H", 99) + b"x" * 10)
        except OSError:
            pass
    elif mode == "reply-type":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, REP_SERVER, struct.pack(">I", 3) + b"abc")
    elif mode == "unknown":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, ERR_UNKNOWN, b"no such export\x01\n")
        linger(s)
    elif mode == "policy":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, ERR_POLICY, b"not for you")
        linger(s)
    elif mode == "tls":
        hello(s)
        opt, _ = read_option(s)
        reply(s, opt, ERR_TLS_REQD)
        linger(s)
    elif mode in ("unsup", "unsup-close", "unsup-trunc"):
        cflags = hello(s)
        opt, _ = read_option(s)
        reply(s, opt, ERR_UNSUP)
        opt, _ = read_option(s)
        if opt != OPT_EXPORT_NAME or mode == "unsup-close":
            return
        if mode == "unsup-trunc":
            s.sendall(struct.pack(">Q", SIZE)[:5])
            return
        s.sendall(struct.pack(">QH", SIZE, TFLAGS) + (b"" if cflags & NOZEROES else bytes(124)))
        linger(s)
    elif mode == "readonly":
        hello(s)
        go_ok(s, flags=TFLAGS | 2)
        linger(s)
    elif mode == "tiny":
        hello(s)
        go_ok(s, size=4096)
        linger(s)
    elif mode == "block-size-big":
        hello(s)
        go_ok(s, extra=[struct.pack(">HIII", INFO_BLOCK_SIZE, 65536, 65536, 1 << 25)])
        linger(s)
    elif mode == "block-size-nonsense":
        hello(s)
        go_ok(s, extra=[struct.pack(">HIII", INFO_BLOCK_SIZE, 3, 0, 0)])
        linger(s)
    elif mode == "differ":  # the second connection sees another size
        hello(s)
        go_ok(s, size=SIZE if n == 1 else SIZE * 2)
        linger(s)
    elif mode == "second-hangs-up":  # the first connection works, the second is closed at once
        if n == 1:
            hello(s)
            go_ok(s)
            linger(s)
    elif mode == "good":
        hello(s)
        go_ok(s, extra=[struct.pack(">HIII", INFO_BLOCK_SIZE, 1, 4096, 1 << 25)])
        linger(s)
    else:
        raise SystemExit(f"unknown mode {mode}")


def main():
    mode = sys.argv[1]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    print(ls.getsockname()[1], flush=True)
    deadline = time.monotonic() + LIFETIME
    n = 0
    while time.monotonic() < deadline:
        ls.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            s, _ = ls.accept()
        except socket.timeout:
            break
        n += 1

        def run(s=s, n=n):
            try:
                serve(mode, s, n)
            except (EOFError, OSError):
                pass
            finally:
                s.close()

        threading.Thread(target=run, daemon=True).start()
    time.sleep(0.5)


if __name__ == "__main__":
    main()
