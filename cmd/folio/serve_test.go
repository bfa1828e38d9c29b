package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
		want func(c serveConfig) bool
	}{
		{"defaults", nil, nil, func(c serveConfig) bool {
			return c.Addr == "localhost:8081" && c.DataDir == "./data" && c.Engine == "pebble" && c.CacheBytes == 128<<20
		}},
		{"file", []string{"--config", file}, nil, func(c serveConfig) bool {
			return c.Addr == ":1" && c.DataDir == "/file" && c.Engine == "postgres" && c.CacheBytes == 1<<20 && time.Duration(c.MaxTxAge) == 3*time.Minute
		}},
		{"env beats file", []string{"--config", file}, map[string]string{"FOLIO_ADDR": ":2", "FOLIO_CACHE_MIB": "64"}, func(c serveConfig) bool {
			return c.Addr == ":2" && c.DataDir == "/file" && c.CacheBytes == 64<<20
		}},
		{"flag beats env", []string{"--config", file, "--addr", ":3", "--cache-mib", "32", "--engine", "pebble"}, map[string]string{"FOLIO_ADDR": ":2", "FOLIO_CACHE_MIB": "64"}, func(c serveConfig) bool {
			return c.Addr == ":3" && c.CacheBytes == 32<<20 && c.Engine == "pebble"
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
		if err != nil || time.Duration(c.AcquireTimeout) != 5*time.Second || c.MaxOpenTx != 3 || c.MaxReads != 7 {
			t.Fatalf("from the file: %+v, %v", c, err)
		}
		t.Setenv("FOLIO_MAX_OPEN_TRANSACTIONS", "-1")
		t.Setenv("FOLIO_ACQUIRE_TIMEOUT", "1s")
		c, err = loadConfig([]string{"--config", file, "--max-concurrent-reads", "9"})
		if err != nil || time.Duration(c.AcquireTimeout) != time.Second || c.MaxOpenTx != -1 || c.MaxReads != 9 {
			t.Fatalf("from env and flags: %+v, %v", c, err)
		}
		if c, err := loadConfig(nil); err != nil || time.Duration(c.AcquireTimeout) != time.Second || c.MaxOpenTx != -1 || c.MaxReads != 0 {
			t.Fatalf("from env only: %+v, %v", c, err)
		}
		t.Setenv("FOLIO_MAX_CONCURRENT_READS", "many")
		if _, err := loadConfig(nil); err == nil {
			t.Fatal("a bad read bound was accepted")
		}
	})
	t.Setenv("FOLIO_CACHE_MIB", "lots")
	if _, err := loadConfig(nil); err == nil {
		t.Fatal("a bad cache size was accepted")
	}
}
