// Package nemesis is the harness of Folio's Jepsen-style nemesis run
// (issue 43): it starts a cluster (three `folio serve` nodes on one
// private PostgreSQL, or one node on the embedded engine), runs clients
// against random nodes over HTTP and gRPC (the Go client, through TCP
// proxies that can cut their connections), injects faults on a schedule
// and at random (kill -9 and restart of a node, SIGSTOP of a node past
// its lease, a PostgreSQL crash and restart, a PostgreSQL that stops
// answering, connections cut mid-call), records every operation's
// invocation and completion, and checks the histories with
// tests/history.
//
// It follows Jepsen and Elle (Kingsbury and Alvaro, "Elle: Inferring
// Isolation Anomalies from Experimental Observations", VLDB 2020): the
// list-append workload, whose reads reveal the order of every key's
// versions, checked for Adya's anomalies (Adya, "Weak Consistency: A
// Generalized Theory and Optimistic Implementations for Distributed
// Transactions", MIT PhD thesis, 1999: G0, G1a, G1b, G1c, G-single,
// G2) with real-time order, and lost or duplicated appends; and the bank
// workload, whose every read of all balances must sum to the total.
//
// An operation's outcome is ok when its answer came, fail when it
// certainly took no effect (an error before its commit was sent, or a
// commit answered ABORTED), and info, unknown, otherwise: a commit whose
// answer was lost may have taken effect (outcome.go).
//
// tests/cmd/nemesis runs it (make nemesis); TestNemesis runs a short one in
// make test.
package nemesis
