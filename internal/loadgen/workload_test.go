package loadgen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The mixes of the YCSB core workloads, as its workload files give them,
// and of Folio's own.
var wantMixes = map[string]map[Op]float64{
	"A":          {OpRead: 0.50, OpUpdate: 0.50},
	"B":          {OpRead: 0.95, OpUpdate: 0.05},
	"C":          {OpRead: 1},
	"D":          {OpRead: 0.95, OpInsert: 0.05},
	"E":          {OpScan: 0.95, OpInsert: 0.05},
	"F":          {OpRead: 0.50, OpReadModifyWrite: 0.50},
	"insert":     {OpInsert: 1},
	"eq":         {OpFindEqual: 1},
	"range":      {OpFindRange: 1},
	"eq-few":     {OpFindFew: 1},
	"range-wide": {OpFindWide: 1},
	"tx":         {OpTransaction: 1},
	"count":      {OpCount: 1},
	"C-2023":     {OpRead2023: 1},
}

func TestMixProportions(t *testing.T) {
	const n = 200_000
	for _, w := range Workloads {
		t.Run(w.Name, func(t *testing.T) {
			want, ok := wantMixes[w.Name]
			if !ok {
				t.Fatalf("no expected mix for workload %s", w.Name)
			}
			r := rand.New(rand.NewPCG(1, 1))
			got := map[Op]int{}
			for range n {
				got[w.Pick(r)]++
			}
			for op, share := range want {
				// Four standard deviations of a binomial share.
				tolerance := 4 * math.Sqrt(share*(1-share)/n)
				if f := float64(got[op]) / n; math.Abs(f-share) > tolerance+1e-9 {
					t.Errorf("%s: %.4f of draws, want %.4f ± %.4f", op, f, share, tolerance)
				}
			}
			for op := range got {
				if _, ok := want[op]; !ok {
					t.Errorf("drew %s, which is not in the mix", op)
				}
			}
		})
	}
}

func TestDefaultDistributions(t *testing.T) {
	for _, w := range Workloads {
		want := Zipfian
		switch w.Name {
		case "D":
			want = Latest // YCSB's D reads the newest records
		case "insert", "eq", "range", "eq-few", "range-wide", "count":
			want = Uniform
		}
		if w.Distribution != want {
			t.Errorf("workload %s runs with %s keys, want %s", w.Name, w.Distribution, want)
		}
	}
}

func TestParseWorkloads(t *testing.T) {
	names := func(ws []Workload) string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Name)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "A", want: "A"},
		{in: "a, c ,tx", want: "A,C,tx"},
		{in: "all", want: "A,B,C,D,E,F,insert,eq,range,eq-few,range-wide,tx,count,C-2023"},
		{in: "range,ALL", want: "range,A,B,C,D,E,F,insert,eq,range,eq-few,range-wide,tx,count,C-2023"},
		{in: "G", err: true},
		{in: "", err: true},
		{in: " , ", err: true},
	}
	for _, tt := range tests {
		got, err := ParseWorkloads(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseWorkloads(%q): error %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if !tt.err && names(got) != tt.want {
			t.Errorf("ParseWorkloads(%q) = %s, want %s", tt.in, names(got), tt.want)
		}
	}
}

func TestDocuments(t *testing.T) {
	d := Dataset{Docs: 1000, Seed: 9}
	for _, id := range []int64{0, 1, 999, 123456} {
		doc := d.Document(id)
		if len(doc) < 950 || len(doc) > 1150 {
			t.Errorf("document %d is %d bytes, want about 1 KB", id, len(doc))
		}
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatalf("document %d: %v\n%s", id, err, doc)
		}
		if m["id"] != float64(id) || m["email"] != Email(id) || m["score"] != float64(d.Score(id)) || m["group"] != Group(id) || len(m) != 4+Fields {
			t.Errorf("document %d: %s", id, doc)
		}
		if string(d.Document(id)) != string(doc) {
			t.Errorf("document %d differs between two calls", id)
		}
	}
	if string(d.Document(5)) == string((Dataset{Docs: 1000, Seed: 10}).Document(5)) {
		t.Error("another seed gave the same document")
	}
	var schema map[string]any
	if err := json.Unmarshal(Schema("usertable"), &schema); err != nil {
		t.Errorf("schema: %v", err)
	}
}

// Score must map the loaded ids one to one onto [0, Docs), so that a range
// of width w holds exactly w loaded documents.
func TestScoreIsAPermutation(t *testing.T) {
	for _, docs := range []int64{1, 2, 7, 1000, 1024, 2654435761 % 100_000, 50_000} {
		d := Dataset{Docs: docs}
		seen := make([]bool, docs)
		for id := range docs {
			s := d.Score(id)
			if s < 0 || s >= docs || seen[s] {
				t.Fatalf("docs %d: score of %d is %d, out of range or taken", docs, id, s)
			}
			seen[s] = true
		}
		if docs > 100 && slices.IsSorted([]int64{d.Score(1), d.Score(2), d.Score(3), d.Score(4)}) && d.Score(2)-d.Score(1) == 1 {
			t.Errorf("docs %d: scores follow the ids; they should not", docs)
		}
	}
}
