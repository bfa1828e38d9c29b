// Package history checks a recorded history of client operations against
// a database for isolation anomalies, after the run: the checker half of a
// Jepsen-style nemesis test (issue 43). It knows nothing of Folio; a
// harness records events (an invocation, then its completion: ok, fail, or
// info when the answer was lost) in the JSON-lines format of jsonl.go, and
// the checkers read them back.
//
// Two workloads are checked:
//
//   - list-append (CheckAppend), following Elle (Kingsbury and Alvaro,
//     "Elle: Inferring Isolation Anomalies from Experimental Observations",
//     VLDB 2020): transactions append unique values to lists and read whole
//     lists, so every read names the versions it saw and the order they
//     were installed in. From that the checker builds the dependency graph
//     of Adya, Liskov and O'Neil ("Generalized Isolation Level
//     Definitions", ICDE 2000) and looks for its cycles (G0, G1c, G-single,
//     G2) and for the anomalies a single read shows (G1a, G1b, lost,
//     duplicated and garbage values, orders that cannot be reconciled).
//   - bank (CheckBank): transfers between accounts, and reads of every
//     balance, which must sum to the total and, unless overdraft is
//     allowed, never go negative.
package history
