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
	t.Setenv("FOLIO_CACHE_MIB", "lots")
	if _, err := loadConfig(nil); err == nil {
		t.Fatal("a bad cache size was accepted")
	}
}
