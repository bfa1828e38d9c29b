package loadgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Op is a kind of operation that workloads mix. Each is one timed unit: its
// latency is from the first request it sends to the last answer it reads.
type Op string

// The operations.
const (
	OpRead   Op = "read"   // a document by primary key
	OpUpdate Op = "update" // set one field of a document by primary key
	OpInsert Op = "insert" // one new document
	OpScan   Op = "scan"   // up to ScanLength documents from a key on, in key order
	// OpReadModifyWrite reads a document, then updates one of its fields
	// (two requests, not in a transaction, as in YCSB).
	OpReadModifyWrite Op = "rmw"
	OpFindEqual       Op = "find-eq"    // documents by equality on email, a non-key field
	OpFindRange       Op = "find-range" // documents by a range on score, a non-key integer
	// OpFindFew is an equality on group, a field with few distinct values
	// (each matches a Groups-th of the documents), limited to FindLimit.
	OpFindFew Op = "find-few"
	// OpFindWide is a range on score that matches a tenth of the documents,
	// limited to FindLimit.
	OpFindWide Op = "find-wide"
	// OpTransaction is an interactive transaction: begin, read two
	// documents, update both, commit. An aborted commit counts as an abort,
	// not as an operation or an error.
	OpTransaction Op = "tx"
	// OpCount counts the documents whose score is in a range that holds a
	// hundredth of them (CountRange): an aggregate answered from the
	// indexes, the same SQL count(*) on PostgreSQL.
	OpCount Op = "count"
	// OpRead2023 is OpRead over the final Tigris API's route
	// (/v1/projects/{p}/database/...): the same work as OpRead, to show
	// that the later route costs the same. PostgreSQL reads as for OpRead.
	OpRead2023 Op = "read-2023"

	// Change events (delivery latency from a write to its event) and search
	// queries join here as operations once the server serves them: an Op,
	// a Driver method, a case in client.do and a Workload below.
)

// Weighted is an operation and its share of a workload's mix.
type Weighted struct {
	Op     Op
	Weight int
}

// Workload is a mix of operations and the key distribution it is meant to
// run with.
type Workload struct {
	Name        string
	Description string
	Mix         []Weighted
	// Distribution is the key distribution used unless the run asks for
	// another.
	Distribution string
}

// Workloads are the YCSB core workloads A to F and Folio's own, in the
// order "all" runs them.
var Workloads = []Workload{
	{"A", "update heavy: 50% read, 50% update", []Weighted{{OpRead, 50}, {OpUpdate, 50}}, Zipfian},
	{"B", "read mostly: 95% read, 5% update", []Weighted{{OpRead, 95}, {OpUpdate, 5}}, Zipfian},
	{"C", "read only", []Weighted{{OpRead, 100}}, Zipfian},
	{"D", "read latest: 95% read, 5% insert", []Weighted{{OpRead, 95}, {OpInsert, 5}}, Latest},
	{"E", "short ranges: 95% scan of 1-100 documents, 5% insert", []Weighted{{OpScan, 95}, {OpInsert, 5}}, Zipfian},
	{"F", "read-modify-write: 50% read, 50% read then update", []Weighted{{OpRead, 50}, {OpReadModifyWrite, 50}}, Zipfian},
	{"insert", "insert only", []Weighted{{OpInsert, 100}}, Uniform},
	{"eq", "equality on a non-key field (email)", []Weighted{{OpFindEqual, 100}}, Uniform},
	{"range", "range of 10 on a non-key integer field (score)", []Weighted{{OpFindRange, 100}}, Uniform},
	{"eq-few", "equality on a field with 16 values (group), limit 10", []Weighted{{OpFindFew, 100}}, Uniform},
	{"range-wide", "range of a tenth of the documents on score, limit 10", []Weighted{{OpFindWide, 100}}, Uniform},
	{"tx", "interactive transactions: begin, 2 reads, 2 updates, commit", []Weighted{{OpTransaction, 100}}, Zipfian},
	{"count", "count of a score range holding a hundredth of the documents", []Weighted{{OpCount, 100}}, Uniform},
	{"C-2023", "read only, over the 2023 API's route (/v1/projects/...)", []Weighted{{OpRead2023, 100}}, Zipfian},
}

// LookupWorkload returns the workload of that name (case-insensitive).
func LookupWorkload(name string) (Workload, error) {
	for _, w := range Workloads {
		if strings.EqualFold(w.Name, name) {
			return w, nil
		}
	}
	names := make([]string, len(Workloads))
	for i, w := range Workloads {
		names[i] = w.Name
	}
	return Workload{}, fmt.Errorf("unknown workload %q (want one of %s, or all)", name, strings.Join(names, ", "))
}

// ParseWorkloads reads a comma-separated list of workload names; "all" is
// every workload.
func ParseWorkloads(list string) ([]Workload, error) {
	var out []Workload
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case strings.EqualFold(name, "all"):
			out = append(out, Workloads...)
			continue
		}
		w, err := LookupWorkload(name)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload in %q", list)
	}
	return out, nil
}

// Ops returns the operations of the mix, in its order.
func (w Workload) Ops() []Op {
	ops := make([]Op, len(w.Mix))
	for i, m := range w.Mix {
		ops[i] = m.Op
	}
	return ops
}

// Pick draws the next operation in the mix's proportions.
func (w Workload) Pick(r *rand.Rand) Op {
	total := 0
	for _, m := range w.Mix {
		total += m.Weight
	}
	n := r.IntN(max(total, 1))
	for _, m := range w.Mix {
		if n < m.Weight {
			return m.Op
		}
		n -= m.Weight
	}
	return w.Mix[len(w.Mix)-1].Op
}
