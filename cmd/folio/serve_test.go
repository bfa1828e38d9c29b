package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
)

func TestLoadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"addr":":1","data_dir":"/file","engine":"postgres","cache_bytes":1048576,"max_tx_age":"3m"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want func(c loaded) bool
	}{
		{"defaults", nil, nil, func(c loaded) bool {
			return c.Addr == "localhost:8081" && c.DataDir == "./data" && c.Engine == "pebble" && c.Pebble.CacheSize == 128<<20
		}},
		{"file", []string{"--config", file}, nil, func(c loaded) bool {
			return c.Addr == ":1" && c.DataDir == "/file" && c.Engine == "postgres" && c.Pebble.CacheSize == 1<<20 && c.MaxTxAge == 3*time.Minute
		}},
		{"env beats file", []string{"--config", file}, map[string]string{"FOLIO_ADDR": ":2", "FOLIO_CACHE_MIB": "64"}, func(c loaded) bool {
			return c.Addr == ":2" && c.DataDir == "/file" && c.Pebble.CacheSize == 64<<20
		}},
		{"flag beats env", []string{"--config", file, "--addr", ":3", "--cache-mib", "32", "--engine", "pebble"}, map[string]string{"FOLIO_ADDR": ":2", "FOLIO_CACHE_MIB": "64"}, func(c loaded) bool {
			return c.Addr == ":3" && c.Pebble.CacheSize == 32<<20 && c.Engine == "pebble"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"FOLIO_ADDR", "FOLIO_CACHE_MIB", "FOLIO_CONFIG", "FOLIO_DATA_DIR", "FOLIO_ENGINE"} {
				t.Setenv(k, tc.env[k])
			}
			c, err := loadConfig(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(c) {
				t.Fatalf("config %+v", c)
			}
		})
	}
	t.Run("connection shares", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "folio.json")
		if err := os.WriteFile(file, []byte(`{"acquire_timeout":"5s","max_open_transactions":3,"max_concurrent_reads":7}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig([]string{"--config", file})
		if err != nil || c.AcquireTimeout != 5*time.Second || c.Sessions.MaxOpen != 3 || c.Ops.MaxConcurrentReads != 7 {
			t.Fatalf("from the file: %+v, %v", c, err)
		}
		t.Setenv("FOLIO_MAX_OPEN_TRANSACTIONS", "-1")
		t.Setenv("FOLIO_ACQUIRE_TIMEOUT", "1s")
		c, err = loadConfig([]string{"--config", file, "--max-concurrent-reads", "9"})
		if err != nil || c.AcquireTimeout != time.Second || c.Sessions.MaxOpen != -1 || c.Ops.MaxConcurrentReads != 9 {
			t.Fatalf("from env and flags: %+v, %v", c, err)
		}
		if c, err := loadConfig(nil); err != nil || c.AcquireTimeout != time.Second || c.Sessions.MaxOpen != -1 || c.Ops.MaxConcurrentReads != 0 {
			t.Fatalf("from env only: %+v, %v", c, err)
		}
		t.Setenv("FOLIO_MAX_CONCURRENT_READS", "many")
		if _, err := loadConfig(nil); err == nil {
			t.Fatal("a bad read bound was accepted")
		}
	})
	t.Run("allowed hosts", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "folio.json")
		if err := os.WriteFile(file, []byte(`{"allowed_hosts":["folio.internal"]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig([]string{"--config", file})
		if got := c.AllowedHosts; err != nil || !slices.Equal(got, []string{"folio.internal"}) {
			t.Fatalf("from the file: %v, %v", got, err)
		}
		t.Setenv("FOLIO_ALLOWED_HOSTS", "a.example,b.example")
		c, err = loadConfig([]string{"--config", file})
		if got := c.AllowedHosts; err != nil || !slices.Equal(got, []string{"a.example", "b.example"}) {
			t.Fatalf("from env: %v, %v", got, err)
		}
	})
	t.Setenv("FOLIO_CACHE_MIB", "lots")
	if _, err := loadConfig(nil); err == nil {
		t.Fatal("a bad cache size was accepted")
	}
}

func TestLoadConfigStreamLimits(t *testing.T) {
	for _, k := range []string{"FOLIO_CONFIG", "FOLIO_MAX_STREAMS", "FOLIO_STREAM_BUFFER_TOTAL_BYTES"} {
		t.Setenv(k, "")
	}
	c, err := loadConfig(nil)
	if err != nil || c.Streams.MaxStreams != 1000 || c.Streams.MaxPendingTotal != 256<<20 {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"max_streams":5,"stream_buffer_total_bytes":1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = loadConfig([]string{"--config", file}); err != nil || c.Streams.MaxStreams != 5 || c.Streams.MaxPendingTotal != 1000 {
		t.Fatalf("file: %+v, %v", c, err)
	}
	t.Setenv("FOLIO_MAX_STREAMS", "7")
	t.Setenv("FOLIO_STREAM_BUFFER_TOTAL_BYTES", "2000")
	if c, err = loadConfig([]string{"--config", file}); err != nil || c.Streams.MaxStreams != 7 || c.Streams.MaxPendingTotal != 2000 {
		t.Fatalf("env: %+v, %v", c, err)
	}
	if c, err = loadConfig([]string{"--max-streams", "9", "--stream-buffer-total-bytes", "3000"}); err != nil || c.Streams.MaxStreams != 9 || c.Streams.MaxPendingTotal != 3000 {
		t.Fatalf("flags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"--max-streams", "0"}, {"--max-streams", "many"}, {"--stream-buffer-total-bytes", "-1"}} {
		if _, err := loadConfig(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// The authentication settings: --auth is a switch, and every setting comes
// from flags, the environment or the file as the others do.
func TestLoadConfigAuth(t *testing.T) {
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"auth":true,"token_ttl":"10m","tls_cert":"c.pem","tls_key":"k.pem"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		auth bool
	}{
		{"off by default", nil, "", false},
		{"a bare switch", []string{"--auth"}, "", true},
		{"a switch given false", []string{"--auth=false"}, "true", false},
		{"from the environment", nil, "true", true},
		{"from the file", []string{"--config", file}, "", true},
		{"the environment beats the file", []string{"--config", file}, "false", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FOLIO_AUTH", tc.env)
			c, err := loadConfig(tc.args)
			if err != nil || c.Auth != tc.auth {
				t.Fatalf("auth %v (%v), want %v", c.Auth, err, tc.auth)
			}
		})
	}
	t.Setenv("FOLIO_AUTH", "")
	c, err := loadConfig([]string{"--config", file, "--refresh-token-ttl", "2h", "--owner-file", "/o.json"})
	if err != nil || c.Tokens.AccessTTL != 10*time.Minute || c.Tokens.RefreshTTL != 2*time.Hour || c.OwnerFile != "/o.json" || c.TLSCert != "c.pem" || c.TLSKey != "k.pem" {
		t.Fatalf("config %+v (%v)", c, err)
	}
	if _, err := loadConfig([]string{"--auth=maybe"}); err == nil {
		t.Fatal("--auth=maybe was accepted")
	}
}

// The console is on unless turned off, by a flag, the environment or the
// file.
func TestLoadConfigConsole(t *testing.T) {
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"console":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		console bool
	}{
		{"on by default", nil, "", true},
		{"a flag given false", []string{"--console=false"}, "", false},
		{"a bare switch", []string{"--console"}, "false", true},
		{"from the environment", nil, "false", false},
		{"from the file", []string{"--config", file}, "", false},
		{"the environment beats the file", []string{"--config", file}, "true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FOLIO_CONSOLE", tc.env)
			c, err := loadConfig(tc.args)
			if err != nil || c.Console != tc.console {
				t.Fatalf("console %v (%v), want %v", c.Console, err, tc.console)
			}
		})
	}
}

func TestLoadConfigRequestLog(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		logRequests bool
		slow        time.Duration // as the node takes it
		wantErr     bool
	}{
		{"defaults", nil, false, node.DefaultSlowRequest, false},
		{"every request", []string{"--log-requests"}, true, node.DefaultSlowRequest, false},
		{"a threshold", []string{"--slow-request", "250ms"}, false, 250 * time.Millisecond, false},
		{"0 turns the slow log off", []string{"--slow-request", "0"}, false, 0, false},
		{"negative refused", []string{"--slow-request", "-1s"}, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(tc.args)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "slow-request") {
					t.Fatalf("want an error naming --slow-request, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := c.Config
			if n.Ops.LogRequests != tc.logRequests || n.Ops.SlowRequest != tc.slow {
				t.Fatalf("node config: log requests %v, slow %v; want %v, %v", n.Ops.LogRequests, n.Ops.SlowRequest, tc.logRequests, tc.slow)
			}
		})
	}
}

// JSON logs write durations as text people read, not bare nanoseconds.
func TestLogDurationsReadable(t *testing.T) {
	var b bytes.Buffer
	log, err := node.NewLogger(node.LogOptions{Level: "info", Format: "json"}, &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("request", "duration", 1500*time.Microsecond, "n", 3)
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["duration"] != "1.5ms" || line["n"] != float64(3) {
		t.Fatalf("line %s", b.Bytes())
	}
}

// --gc-percent: 400 by default, from the flag, the environment or the file
// like the others; -1 turns the collector off, below it is refused.
func TestLoadConfigGCPercent(t *testing.T) {
	for _, k := range []string{"FOLIO_CONFIG", "FOLIO_GC_PERCENT"} {
		t.Setenv(k, "")
	}
	tests := []struct {
		args []string
		env  string
		want int
		bad  bool
	}{
		{want: 400},
		{args: []string{"--gc-percent", "100"}, want: 100},
		{env: "250", want: 250},
		{args: []string{"--gc-percent", "-1"}, want: -1},
		{args: []string{"--gc-percent", "0"}, want: 0},
		{args: []string{"--gc-percent", "-2"}, bad: true},
		{args: []string{"--gc-percent", "lots"}, bad: true},
	}
	for _, tt := range tests {
		t.Setenv("FOLIO_GC_PERCENT", tt.env)
		c, err := loadConfig(tt.args)
		switch {
		case tt.bad && err == nil:
			t.Errorf("%q (env %q) was accepted", tt.args, tt.env)
		case !tt.bad && (err != nil || c.GCPercent != tt.want):
			t.Errorf("%q (env %q): gc percent %d, %v; want %d", tt.args, tt.env, c.GCPercent, err, tt.want)
		}
	}
}
