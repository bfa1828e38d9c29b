#!/usr/bin/env python3
# cpu-buckets.py: where a Folio server's CPU went, per operation, from a CPU
# profile (docs/benchmarks.md, issue 16). Every sample goes to one bucket by
# its stack: Pebble's flushes and compactions, the WAL's writes and fsyncs,
# the commit sequencer, the HTTP protocol (net/http's reading and writing,
# with their system calls), and, inside Folio's handler, Pebble's reads or
# Folio's own work; the rest is the collector and the scheduler.
#
# usage: scripts/cpu-buckets.py PROFILE OPERATIONS
# (OPERATIONS: how many the server answered while the profile ran; needs
# `go tool pprof`; python3's standard library only.)
import collections, re, subprocess, sys

UNITS = {"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
SAMPLE = re.compile(r"\s*([\d.]+)(s|ms|us|µs|ns)\s+(\S.*)")


def bucket(stack):
    s = " ".join(stack)
    if re.search(r"compactAndWrite|\(\*DB\)\.flush1|runCompaction|\(\*DB\)\.compact|layoutWriter", s):
        return "flushes, compactions"
    if "LogWriter).flushLoop" in s:
        return "WAL writes, fsync"
    if "pebblekv.(*sequencer)" in s or "runSyncer" in s:
        return "commit sequencer"
    # A response larger than net/http's buffer is written from inside the
    # handler: its write is still the protocol's.
    if "checkConnErrorWriter" in s or "net/http.(*conn).readRequest" in s:
        return "HTTP and its system calls"
    if "httpapi.(*Server).ServeHTTP" in s:
        if re.search(r"cockroachdb/pebble|pebblekv\.\(\*valueCache\)", s):
            return "Pebble reads"
        return "Folio's own work"
    if "net/http.(*conn).serve" in s:
        return "HTTP and its system calls"
    if re.search(r"gcBgMarkWorker|bgsweep|bgscavenge|gcAssist", s):
        return "GC"
    return "scheduler, other"


def main():
    profile, ops = sys.argv[1], float(sys.argv[2])
    out = subprocess.run(["go", "tool", "pprof", "-traces", profile],
                         capture_output=True, text=True, check=True).stdout
    total = collections.Counter()
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        # Label lines (pprof.Do's, Pebble's) come before the sample's value.
        while lines and not SAMPLE.match(lines[0]):
            lines = lines[1:]
        if not lines:
            continue
        m = SAMPLE.match(lines[0])
        value = float(m.group(1)) * UNITS[m.group(2)]
        total[bucket([m.group(3)] + [l.strip() for l in lines[1:]])] += value
    all_ = sum(total.values())
    print(f"in all {all_ * 1e6 / ops:.1f} µs per operation")
    for name, v in total.most_common():
        print(f"  {name:28s} {v * 1e6 / ops:7.1f} µs {100 * v / all_:5.1f}%")


if __name__ == "__main__":
    main()
