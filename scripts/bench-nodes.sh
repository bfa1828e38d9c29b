#!/bin/sh
# bench-nodes.sh: one Folio node against three on the same PostgreSQL
# database (issue 19), with folio bench spreading its requests over the
# nodes (--url a,b,c). Starts a throwaway PostgreSQL cluster (durable:
# fsync on) in a temporary directory and removes it at the end.
#
#   scripts/bench-nodes.sh [workloads] [duration] [docs]
#
# Needs PostgreSQL's server binaries (PGBIN, default Debian's 15) and a
# folio binary (FOLIO, default: built into the temporary directory).
set -eu
WORKLOADS=${1:-C,A,insert,tx}
DURATION=${2:-10s}
DOCS=${3:-100000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
TMP=$(mktemp -d)
PGPORT=${PGPORT:-55433}
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	su postgres -c "$PGBIN/pg_ctl -D $TMP/pg -m immediate stop" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
if [ -z "${FOLIO:-}" ]; then
	FOLIO=$TMP/folio
	go build -o "$FOLIO" ./cmd/folio
fi
mkdir "$TMP/pg"
chown postgres "$TMP" "$TMP/pg"
su postgres -c "$PGBIN/initdb -D $TMP/pg -U folio --auth=trust" >/dev/null
su postgres -c "$PGBIN/pg_ctl -D $TMP/pg -o '-p $PGPORT -k $TMP -c max_connections=200' -l $TMP/pg.log -w start" >/dev/null
su postgres -c "$PGBIN/createdb -h $TMP -p $PGPORT -U folio folio"
# 64 connections a node: a quarter (16) for interactive transactions, one
# per client of the tx workload.
URL="postgres://folio@127.0.0.1:$PGPORT/folio?sslmode=disable&pool_max_conns=64"

# start_nodes N: N nodes on ports 8091.., each with its own search index.
start_nodes() {
	PIDS=""
	URLS=""
	i=1
	while [ "$i" -le "$1" ]; do
		port=$((8090 + i))
		"$FOLIO" serve --engine postgres --postgres-url "$URL" --addr "127.0.0.1:$port" \
			--node-id "node$i" --data-dir "$TMP/node$i" --log-level warn 2>>"$TMP/nodes.log" &
		PIDS="$PIDS $!"
		URLS="$URLS${URLS:+,}http://127.0.0.1:$port"
		i=$((i + 1))
	done
	for u in $(echo "$URLS" | tr , ' '); do
		until curl -sf "$u/v1/health" >/dev/null 2>&1; do sleep 0.2; done
	done
}

stop_nodes() {
	for p in $PIDS; do kill "$p"; done
	wait $PIDS 2>/dev/null || true
	PIDS=""
}

# The first run loads the documents; the second finds them there (a drop
# of the loaded collection would take a while on PostgreSQL, where it
# writes a tombstone per key).
load=true
for n in 1 3; do
	start_nodes "$n"
	echo "== $n node(s): $URLS"
	"$FOLIO" bench --url "$URLS" --workload "$WORKLOADS" --duration "$DURATION" --docs "$DOCS" --load=$load
	stop_nodes
	load=false
done
