package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := write("valid.jsonl", `{"process":0,"type":"invoke","f":"txn","value":[["append","x",1]]}
{"process":0,"type":"ok","f":"txn","value":[["append","x",1]]}
{"process":1,"type":"invoke","f":"txn","value":[["r","x",null]]}
{"process":1,"type":"ok","f":"txn","value":[["r","x",[1]]]}
`)
	aborted := write("aborted.jsonl", `{"process":0,"type":"invoke","f":"txn","value":[["append","x",1]]}
{"process":0,"type":"fail","f":"txn","value":[["append","x",1]]}
{"process":1,"type":"invoke","f":"txn","value":[["r","x",null]]}
{"process":1,"type":"ok","f":"txn","value":[["r","x",[1]]]}
`)
	bank := write("bank.jsonl", `{"process":0,"type":"invoke","f":"read","value":null}
{"process":0,"type":"ok","f":"read","value":{"a":40,"b":50}}
`)
	broken := write("broken.jsonl", `{"process":0,"type":"ok","f":"txn","value":[]}`+"\n")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-realtime", valid}, 0, "4 events, 2 ops: valid"},
		{[]string{aborted}, 1, "G1a: op 1 read 1 in x, appended by op 0, which failed"},
		{[]string{"-workload", "bank", "-total", "90", bank}, 0, "valid"},
		{[]string{"-workload", "bank", "-total", "100", bank}, 1, "wrong-total"},
		{[]string{broken}, 2, "nothing in flight"},
		{[]string{filepath.Join(dir, "missing")}, 2, "no such file"},
		{[]string{"-workload", "queue", valid}, 2, "unknown workload"},
		{nil, 2, "usage"},
	} {
		var stdout, stderr strings.Builder
		code := run(tc.args, &stdout, &stderr)
		if out := stdout.String() + stderr.String(); code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("historycheck %v = %d, %q; want %d and %q", tc.args, code, out, tc.code, tc.out)
		}
	}
}
