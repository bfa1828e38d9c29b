package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
)

// clearServeEnv unsets every variable folio serve reads, for the test.
func clearServeEnv(t *testing.T) {
	t.Setenv("FOLIO_CONFIG", "")
	for _, s := range settings() {
		if s.env != "" {
			t.Setenv(s.env, "")
		}
	}
}

// folio serve with no flags runs node.DefaultConfig, and a node started
// from node.DefaultConfig (as the tests start theirs) runs as that one does.
func TestServeRunsTheDefaultConfig(t *testing.T) {
	clearServeEnv(t)
	l, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Config, node.DefaultConfig()) {
		t.Fatalf("folio serve's configuration with no flags differs from node.DefaultConfig:\n%+v\n%+v", l.Config, node.DefaultConfig())
	}
	// The nodes both describe, each in a directory of its own on a free
	// port: what they run with once started is the same.
	effective := func(cfg node.Config) node.Config {
		cfg.DataDir = filepath.Join(t.TempDir(), "data")
		cfg.Addr = "127.0.0.1:0"
		n, err := node.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		got := n.Config()
		// What differs by construction: the directory, and the node id
		// picked for a port chosen at start.
		got.DataDir, got.Search.Dir, got.OwnerFile, got.Sessions.Origin = "", "", "", ""
		got.Logger, got.Sessions.Logger, got.Streams.Logger, got.ChangeLog.Logger, got.Tokens.Logger, got.Cluster.Logger, got.Search.Logger = nil, nil, nil, nil, nil, nil, nil
		return got
	}
	fromServe, fromDefault := effective(l.Config), effective(node.DefaultConfig())
	if !reflect.DeepEqual(fromServe, fromDefault) {
		t.Fatalf("effective configurations differ:\nfolio serve: %+v\nDefaultConfig: %+v", fromServe, fromDefault)
	}
	// What the binary ships with and tests ran without before issue 42.
	if fromDefault.ChangeLog.Retention != node.DefaultLogRetention || fromDefault.ChangeLog.MaxBytes != node.DefaultLogRetentionBytes ||
		fromDefault.Ops.SlowRequest != time.Second || fromDefault.GCPercent != node.DefaultGCPercent {
		t.Fatalf("defaults %+v", fromDefault)
	}
}

// --print-config shows each setting's value and where it came from, and
// leaves passwords out.
func TestPrintConfig(t *testing.T) {
	clearServeEnv(t)
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"engine":"postgres","postgres_url":"postgres://folio:hunter2@db/folio","cache_bytes":1048576,"max_body_bytes":1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FOLIO_LOG_RETENTION", "2h")
	l, err := loadConfig([]string{"--config", file, "--print-config", "--addr", ":9000"})
	if err != nil {
		t.Fatal(err)
	}
	if !l.print {
		t.Fatal("--print-config not noted")
	}
	var out bytes.Buffer
	if err := printConfig(&out, l); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[0]] = f[1:]
	}
	for key, want := range map[string][]string{
		"addr":            {":9000", "flag"},
		"log_retention":   {"2h0m0s", "env"},
		"engine":          {"postgres", "file"},
		"cache_bytes":     {"1048576", "file"},
		"max_body_bytes":  {"1000", "file"},
		"postgres_url":    {"postgres://folio:xxxxx@db/folio", "file"},
		"request_timeout": {"30s", "default"},
		"gc_percent":      {"400", "default"},
	} {
		if !reflect.DeepEqual(rows[key], want) {
			t.Errorf("%s: %q, want %q", key, rows[key], want)
		}
	}
	if strings.Contains(out.String(), "hunter2") {
		t.Errorf("the password was printed:\n%s", out.String())
	}
	if len(rows) != len(settings()) {
		t.Errorf("%d settings printed, want %d:\n%s", len(rows), len(settings()), out.String())
	}
}
