"""netswap rig command line.

  python3 -m netswap run SCENARIO... [--runs N] [--set KEY=VALUE]... [--out DIR]
  python3 -m netswap report RESULTS.jsonl... [--runs]
  python3 -m netswap verify CHECK RESULTS.jsonl  (named checks, KTAP out)
  python3 -m netswap check SCENARIO...       (parse only)
  python3 -m netswap keys                    (scenario keys, guest settings)

Exit status of `run`: 0 every run met its scenario's `expect` (the verdict,
and a kernel with no fatal report the scenario does not allow); 1 some run
did not; 2 bad command line or scenario; 3 host-side failure (build,
nbd-server, QEMU) - nothing is left running in any case.
Exit status of `verify`: 0 every check passed; 1 one failed; 2 bad command
line; 3 none failed but one could not be judged (no record, no KTAP).
"""

import argparse
import signal
import sys

from . import checks, guestenv, netns, report, run, scenario
from .errors import RigError


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(prog="netswap", description="netswap QEMU rig")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run scenarios")
    r.add_argument("scenarios", nargs="+")
    r.add_argument("--runs", type=int, help="override every scenario's runs")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key (repeatable)")
    r.add_argument("--matrix", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="run every combination of these values (repeatable)")
    r.add_argument("--out", default=run.OUT, help="output folder (default: out/)")
    r.add_argument("--results", help="JSON-lines file to append to")
    r.add_argument("--first-run", type=int, default=1, metavar="N",
                   help="start at run N (resume an interrupted series into --results)")
    r.add_argument("--quiet", action="store_true")
    r.add_argument("--summary", action="store_true", help="print the human summary of each run")
    p = sub.add_parser("report", help="tables from result files")
    p.add_argument("files", nargs="+")
    p.add_argument("--runs", action="store_true", help="also list every run")
    c = sub.add_parser("check", help="parse scenarios only")
    c.add_argument("scenarios", nargs="+")
    sub.add_parser("keys", help="list scenario keys and the guest settings they feed")
    v = sub.add_parser("verify", help="judge result records with named checks (KTAP out)")
    v.add_argument("check", help="NAME[,NAME...] | kunit:SUITE.CASE | verdict:VERDICT; "
                   "names: " + ", ".join(sorted(checks.CHECKS)))
    v.add_argument("results", nargs="+", help="JSON-lines results files")
    v.add_argument("--title", help="a comment line after the KTAP header")
    v.add_argument("--only", action="append", default=[], metavar="KEY=VALUE",
                   help="judge only records whose KEY is VALUE (JSON spelling: "
                   "series=true, nic=e1000); repeatable")
    v.add_argument("--records", type=int, metavar="N",
                   help="also check that exactly N records were judged")
    b = sub.add_parser("bench", help="benchmarks (make bench; BENCH_QUICK=1 for a few minutes)")
    b.add_argument("--quick", action="store_true")
    b.add_argument("--icount", action="store_true",
                   help="the network table and fast-path costs under instruction counting "
                   "(make bench-icount)")
    b.add_argument("--swap", action="store_true",
                   help="where an NBD-swapped page's time goes: local disk against NBD on user "
                   "networking and the tap, -C 1/2/4, page-cluster 0 (make bench-swap)")
    b.add_argument("--swap-profile", action="store_true",
                   help="guest CPU per function and layer (tools/kprof), local disk against NBD "
                   "on the tap (make bench-swap-profile)")
    b.add_argument("--only", metavar="PHASE[,PHASE]",
                   help="with --icount: only these of fastpath, fastpath-jl, net-icount, net-tcg")
    b.add_argument("--append", action="store_true",
                   help="with --icount: add to the results file instead of starting it again")
    b.add_argument("--report", metavar="FILE",
                   help="only rebuild the markdown table and plots from a bench results file")
    a = ap.parse_args(argv)

    signal.signal(signal.SIGTERM, _sigterm)
    try:
        if a.cmd == "bench":
            from . import bench
            if a.report:
                return bench.main(["--report", a.report])
            return bench.main((["--quick"] if a.quick else []) + (["--icount"] if a.icount else [])
                              + (["--swap"] if a.swap else [])
                              + (["--swap-profile"] if a.swap_profile else [])
                              + (["--only", a.only] if a.only else []) + (["--append"] if a.append else []))
        if a.cmd == "keys":
            print(scenario.describe_keys())
            print("\nguest settings (run.conf), from guestenv.TABLE:")
            print(guestenv.describe())
            return 0
        if a.cmd == "verify":
            try:
                recs = checks.select(report.load(a.results), a.only)
                results = checks.run(a.check, recs, scenario.ROOT)
                if a.records is not None:
                    results.append(checks.record_count(recs, a.records))
            except checks.SpecError as e:
                print(f"netswap: error: {e}", file=sys.stderr)
                return 2
            print("\n".join(checks.ktap(results, a.title)))
            return checks.exit_status(results)
        if a.cmd == "report":
            recs = report.load(a.files)
            print(report.ab_table(recs))
            if a.runs:
                print()
                print(report.runs_table(recs))
            return 0
        overrides = list(a.set if a.cmd == "run" else [])
        if a.cmd == "run" and a.runs:
            overrides.append(f"runs={a.runs}")
        combos = [[]]
        for m in (a.matrix if a.cmd == "run" else []):
            if "=" not in m:
                raise scenario.ScenarioError(f"--matrix {m!r}: expected KEY=V1,V2,...")
            k, vals = m.split("=", 1)
            combos = [c + [f"{k}={v}"] for c in combos for v in vals.split(",")]
        scs = [scenario.load(s, overrides + c) for s in a.scenarios for c in combos]
        if a.cmd == "check":
            for sc in scs:
                print(f"{sc.name}: ok ({sc.variant}, {sc.nic}, {sc.workload})")
            return 0
        for sc in scs:
            if sc.server_restart and sc.swap not in ("nbd", "nbd-manual"):
                raise scenario.ScenarioError(f"{sc.name}: server_restart needs an nbd server "
                                             f"(got swap = {sc.swap})")
            if sc.server_pause and sc.swap not in ("nbd", "nbd-manual"):
                raise scenario.ScenarioError(f"{sc.name}: server_pause needs swap = nbd "
                                             f"(got swap = {sc.swap})")
        keys = {netns.key(sc) for sc in scs}
        if len(keys) > 1:
            raise scenario.ScenarioError("one invocation runs in one host link setting "
                                         "(net, mtu, tap_rate, tap_queue_ms, tap_loss, host_lo_rate); got "
                                         + "; ".join(sorted(k or "default" for k in keys)))
        k = keys.pop()
        if k and not netns.inside(k):
            return netns.reexec(k, list(argv if argv is not None else sys.argv[1:]))
        recs, path = run.run_scenarios(scs, a.out, a.quiet, a.results, a.first_run)
        if a.summary:
            for rec in recs:
                print(report.human(rec))
                print()
        print(report.ab_table(recs))
        print(f"results: {path}")
        bad = [r for r in recs if not r["met_expectation"]]
        for r in bad:
            why = f"got {r['verdict']}"
            if not r["kernel_clean"]:
                why += ", kernel reports " + ", ".join(r["kernel_fatal"])
            print(f"netswap: run {r['run_id']}: expected {r['expect']}, {why}",
                  file=sys.stderr)
        return 1 if bad else 0
    except scenario.ScenarioError as e:
        print(f"netswap: error: {e}", file=sys.stderr)
        return 2
    except (RigError, ValueError, OSError) as e:
        print(f"netswap: error: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("netswap: interrupted; everything started was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
