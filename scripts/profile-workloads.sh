#!/bin/bash
# profile-workloads.sh: where a Folio server's CPU goes under each workload
# of folio bench (docs/benchmarks.md, issue 16). For each workload: a fresh
# `folio serve` in a temporary directory, 50,000 documents and a 3 s
# update-heavy warm-up, a wait until the server is idle, then a 10 s CPU
# profile in the middle of a 14 s run, split by scripts/cpu-buckets.py.
#
#   scripts/profile-workloads.sh FOLIO_BINARY "C eq insert ..." [OUTDIR]
#
# Profiles and the runs' JSON are kept in OUTDIR (default: a new temporary
# directory). Linux (/proc), curl, python3 and go.
set -eu
BIN=$1
WORKLOADS=$2
OUT=${3:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
for W in $WORKLOADS; do
	PORT=$((18000 + RANDOM % 1000))
	PPROF=$((PORT + 1000))
	DIR=$(mktemp -d)
	"$BIN" serve --addr 127.0.0.1:$PORT --data-dir "$DIR" --log-level warn --pprof-addr 127.0.0.1:$PPROF >"$DIR.log" 2>&1 &
	PID=$!
	trap 'kill $PID 2>/dev/null; rm -rf "$DIR" "$DIR.log"' EXIT
	for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:$PORT/v1/health && break; sleep 0.2; done
	"$BIN" bench --url http://127.0.0.1:$PORT --docs 50000 --workload A --duration 3s --quiet >/dev/null
	cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
	# Idle: under 30 ms of CPU in 1.5 s (the warm-up's compactions done).
	a=$(cpu)
	while sleep 1.5; b=$(cpu); [ $((b - a)) -gt 3 ]; do a=$b; done
	"$BIN" bench --url http://127.0.0.1:$PORT --docs 50000 --load=false --warmup 0 --workload "$W" --duration 14s --quiet --json >"$OUT/$W.json" &
	BENCH=$!
	sleep 2.5
	curl -s -o "$OUT/$W.pprof" "http://127.0.0.1:$PPROF/debug/pprof/profile?seconds=10"
	wait $BENCH
	OPS=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))[0]['total']; print(t['ops_per_sec']*10)" "$OUT/$W.json")
	echo "== $W: $(python3 -c "print(round(float('$OPS')/10))") operations/s"
	python3 "$HERE/cpu-buckets.py" "$OUT/$W.pprof" "$OPS"
	kill $PID
	wait $PID 2>/dev/null || true
	rm -rf "$DIR" "$DIR.log"
	trap - EXIT
done
echo "profiles in $OUT"
