#!/usr/bin/env python3
"""Mutation check of the host tests: break nbd-swap-attach one way at a time,
rebuild it in a scratch folder, run test_attach.sh against the broken binary
and show which tests caught it. Every test must fail under some mutation, and
every mutation must be caught by some test; otherwise exit 1.

    tools/nbd-swap-attach/mutate.py [NAME...]     (~15 min for all; names filter)

Only mutations of the user-space side are made: nothing here may lead the
tests to netlink, and the tests keep NBD_SWAP_ATTACH_NO_NETLINK set anyway.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["main.c", "negotiate.c", "nl.c", "attach.h", "nl.h"]

# name, file, exact text, replacement: each text must occur exactly once
MUTATIONS = [
    ("greeting-unchecked", "negotiate.c",
     "if (get64(hello) != NBD_INIT_PASSWD) {", "if (0) {"),
    ("oldstyle-unrecognised", "negotiate.c",
     "if (magic == NBD_OLDSTYLE_MAGIC) {", "if (0) {"),
    ("eof-is-timeout", "negotiate.c",
     "\t\tif (r == 0)\n\t\t\treturn fail(XC_PROTOCOL,\n\t\t\t\t    \"connection %d: server %s closed",
     "\t\tif (r == 0)\n\t\t\treturn fail(XC_UNREACHABLE,\n\t\t\t\t    \"connection %d: server %s closed"),
    ("no-deadline", "negotiate.c",
     "int pr = poll(&pfd, 1, ms_left(c));", "int pr = poll(&pfd, 1, -1);"),
    ("reply-magic-unchecked", "negotiate.c",
     "if (get64(hdr) != NBD_REP_MAGIC) {", "if (0) {"),
    ("reply-option-unchecked", "negotiate.c",
     "if (opt != NBD_OPT_GO) {", "if (0) {"),
    ("reply-length-unbounded", "negotiate.c",
     "if (rlen > MAX_REPLY) {", "if (0) {"),
    ("info-replies-unbounded", "negotiate.c",
     "if (++replies > MAX_INFO_REPLIES) {", "if (0) {"),
    ("info-export-length-unchecked", "negotiate.c",
     "if (rlen != 12) {", "if (rlen < 10) {"),
    ("ack-without-export", "negotiate.c",
     "if (!have_export)", "if (0)"),
    ("unexpected-reply-ignored", "negotiate.c",
     "\t\trc = fail(XC_PROTOCOL, \"connection %d: server %s: unexpected reply type",
     "\t\tcontinue;\n\t\trc = fail(XC_PROTOCOL, \"connection %d: server %s: unexpected reply type"),
    ("unsup-not-fallen-back", "negotiate.c",
     "if (type == NBD_REP_ERR_UNSUP) {", "if (0) {"),
    ("unknown-export-is-refusal", "negotiate.c",
     "rc = fail(XC_NOEXPORT, \"server %s has no export", "rc = fail(XC_REFUSED, \"server %s has no export"),
    ("tls-not-named", "negotiate.c",
     "} else if (type == NBD_REP_ERR_TLS_REQD) {", "} else if (0) {"),
    ("server-text-unescaped", "negotiate.c",
     "if (in[i] >= 0x20 && in[i] < 0x7f)", "if (1)"),
    ("export-name-eof-unrecognised", "negotiate.c",
     "recv(c->fd, rep, 1, MSG_PEEK | MSG_DONTWAIT) == 0", "0"),
    ("go-without-fixed-newstyle", "negotiate.c",
     "\tif (client & NBD_FLAG_FIXED_NEWSTYLE) {\n\t\trc = opt_go", "\tif (1) {\n\t\trc = opt_go"),
    ("unreachable-is-protocol", "negotiate.c",
     "return fail(XC_UNREACHABLE, \"connection %d: cannot reach", "return fail(XC_PROTOCOL, \"connection %d: cannot reach"),
    ("readonly-accepted", "main.c",
     "if (ex->flags & 2)\t/* NBD_FLAG_READ_ONLY */", "if (0)"),
    ("tiny-accepted", "main.c",
     "if (ex->size < MIN_SWAP_BYTES)", "if (0)"),
    ("min-block-size-ignored", "main.c",
     "if (o->bs < ex->min_bs)", "if (0)"),
    ("block-sizes-unchecked", "main.c",
     "if (!ex->min_bs || ex->min_bs > 65536", "if (0 || ex->min_bs > 65536"),
    ("max-request-not-warned", "main.c",
     "if (ex->max_bs < KERNEL_MAX_REQUEST)", "if (0)"),
    ("connections-not-compared", "main.c",
     "if (e->size != first->size || e->flags != first->flags)", "if (0)"),
    ("range-unchecked", "main.c",
     "if (*end || errno || v < lo || v > hi)", "if (*end || errno)"),
    ("device-unchecked", "main.c",
     "if (strncmp(p, \"nbd\", 3) || p[3] < '0' || p[3] > '9')", "if (0)"),
    ("long-name-accepted", "main.c",
     "if (strlen(optarg) > NBD_EXPORT_NAME_MAX)", "if (0)"),
    ("force-anywhere", "main.c",
     "if (o->force)\n", "if (0)\n"),
    ("wait-with-dry-run", "main.c",
     "if (o->wait && o->dry_run)", "if (0)"),
    ("zero-dead-conn-timeout", "main.c",
     "if (!o->dead_conn_timeout && !o->no_reconnect)", "if (0)"),
    ("negotiation-misreported", "main.c",
     "ex->used_go ? \"NBD_OPT_GO\" : \"NBD_OPT_EXPORT_NAME\"", "\"NBD_OPT_GO\""),
    ("reconnect-misreported", "main.c",
     "snprintf(how, sizeof(how), \"off (--no-reconnect)\");", "snprintf(how, sizeof(how), \"off\");"),
    ("flags-unnamed", "negotiate.c",
     "\"HAS_FLAGS\", \"READ_ONLY\"", "\"F0\", \"READ_ONLY\""),
    ("help-without-exit-codes", "main.c",
     "\"  12  -d: the device is not connected\\n\"", "\"\""),
    ("netlink-refusal-code", "main.c",
     "\tif (!*sk)\n\t\treturn XC_ERROR;", "\tif (!*sk)\n\t\treturn XC_KERNEL;"),
    ("disconnect-refusal-code", "main.c",
     "\trc = open_family(&sk, &fam, o->index);\n\tif (rc)\n\t\tgoto out;\n\terr = nbdnl_status(sk, &fam, o->index, &connected);\n\tif (err) {\n\t\trc = kernel_errno(err, \"asking the kernel about\", o->index);\n\t\tgoto out;\n\t}\n\tif (!connected) {",
     "\trc = open_family(&sk, &fam, o->index);\n\tif (rc)\n\t\trc = XC_NOTCONN;\n\tif (rc)\n\t\tgoto out;\n\terr = nbdnl_status(sk, &fam, o->index, &connected);\n\tif (err) {\n\t\trc = kernel_errno(err, \"asking the kernel about\", o->index);\n\t\tgoto out;\n\t}\n\tif (!connected) {"),
    ("opts-magic-unchecked", "negotiate.c",
     "if (magic != NBD_OPTS_MAGIC) {", "if (0) {"),
    ("policy-unnamed", "negotiate.c",
     "\tcase NBD_REP_ERR_POLICY: return \"NBD_REP_ERR_POLICY\";\n", ""),
    ("zeroes-always-expected", "negotiate.c",
     "size_t want = no_zeroes ? 10 : sizeof(rep);", "size_t want = sizeof(rep);"),
    ("block-sizes-dropped", "negotiate.c",
     "ex->has_bs = 1;", "ex->has_bs = 0;"),
    ("size-misread", "negotiate.c",
     "ex->size = get64(data + 2);", "ex->size = get64(data + 2) >> 1;"),
    ("name-not-sent", "negotiate.c",
     "size_t nlen = strlen(name);", "size_t nlen = 0;"),
    ("go-never-sent", "negotiate.c",
     "client = ex->hs_flags & (NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);",
     "client = ex->hs_flags & NBD_FLAG_NO_ZEROES;"),
    ("port-byte-order", "negotiate.c",
     "in4->sin_port = htons(p);", "in4->sin_port = p;"),
    ("port-unchecked", "negotiate.c",
     "if (!*port || *end || errno || p == 0 || p > 65535)", "if (!*port || *end || errno)"),
    ("bad-host-wrong-code", "negotiate.c",
     "\t\treturn fail(XC_USAGE,\n\t\t\t    \"bad host", "\t\treturn fail(XC_UNREACHABLE,\n\t\t\t    \"bad host"),
    ("one-connection-only", "main.c",
     "while (nfds < o->conns) {", "while (nfds < 1) {"),
    ("reconnect-sockets-miscounted", "main.c",
     "\"(kernel support is not checked by --dry-run)\", o->conns, o->conns > 1",
     "\"(kernel support is not checked by --dry-run)\", 1, o->conns > 1"),
    ("block-size-any", "main.c",
     "if (!rc && (v & (v - 1)))", "if (0)"),
    ("negative-accepted", "main.c",
     "if (!*arg || *arg == '-' || *arg == ' ')", "if (!*arg)"),
    ("junk-accepted", "main.c",
     "if (*end || errno || v < lo || v > hi)", "if (errno || v < lo || v > hi)"),
    ("device-number-unchecked", "main.c",
     "if (*end || errno || v < 0 || v > 65535)", "if (errno || v < 0 || v > 65535)"),
    ("operands-uncounted", "main.c",
     "if (argc - optind != 3)", "if (argc - optind > 3)"),
    ("unknown-option-ignored", "main.c",
     "\t\t\treturn fail(XC_USAGE, \"unknown option", "\t\t\tbreak;\n\t\t\treturn fail(XC_USAGE, \"unknown option"),
    ("missing-argument-ignored", "main.c",
     "\t\t\treturn fail(XC_USAGE, \"option %s needs", "\t\t\tbreak;\n\t\t\treturn fail(XC_USAGE, \"option %s needs"),
]


def build(src, out):
    cflags = subprocess.run(["pkg-config", "--cflags", "libnl-genl-3.0"], capture_output=True,
                            text=True).stdout.split() or ["-I/usr/include/libnl3"]
    cmd = ["gcc", "-Wall", "-Wextra", "-Werror", "-std=gnu11", "-O2", *cflags, "-static", "-o", out,
           *(os.path.join(src, f) for f in ("main.c", "negotiate.c", "nl.c")),
           "-lnl-genl-3", "-lnl-3", "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"build failed:\n{r.stderr}")


def run_tests(binary):
    r = subprocess.run([os.path.join(HERE, "test_attach.sh"), binary], capture_output=True, text=True)
    failed = re.findall(r"^not ok \d+ - (.*?)(?: \(rc=.*)?$", r.stdout, re.M)
    passed = re.findall(r"^ok \d+ - (.*)$", r.stdout, re.M)
    return passed, failed


def main():
    want = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="nbd-swap-attach-mutate.")
    try:
        base = os.path.join(work, "base")
        build(HERE, base)
        passed, failed = run_tests(base)
        if failed:
            raise SystemExit(f"the unmutated build fails: {failed}")
        caught_by = {t: [] for t in passed}
        uncaught = []
        for name, fname, old, new in MUTATIONS:
            if want and name not in want:
                continue
            src = os.path.join(work, name)
            os.mkdir(src)
            for f in SOURCES:
                shutil.copy(os.path.join(HERE, f), src)
            path = os.path.join(src, fname)
            text = open(path).read()
            if text.count(old) != 1:
                raise SystemExit(f"mutation {name}: text found {text.count(old)} times in {fname}")
            open(path, "w").write(text.replace(old, new))
            binary = os.path.join(src, "nbd-swap-attach")
            build(src, binary)
            _, failed = run_tests(binary)
            print(f"{name}: {len(failed)} failed" + "".join(f"\n    {t}" for t in failed), flush=True)
            for t in failed:
                caught_by.setdefault(t, []).append(name)
            if not failed:
                uncaught.append(name)
        never = [t for t, ms in caught_by.items() if not ms]
        print(f"\n{len(caught_by) - len(never)} of {len(caught_by)} tests failed under some mutation")
        for t in never:
            print(f"  never failed: {t}")
        for m in uncaught:
            print(f"  mutation not caught: {m}")
        return 1 if (uncaught or (never and not want)) else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
