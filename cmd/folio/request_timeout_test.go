package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The request timeout comes from the flag, the environment, the config
// file or the default, in that order, and must be positive.
func TestLoadConfigRequestTimeout(t *testing.T) {
	file := filepath.Join(t.TempDir(), "folio.json")
	if err := os.WriteFile(file, []byte(`{"request_timeout":"40s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want time.Duration
	}{
		{"default", nil, "", 30 * time.Second},
		{"file", []string{"--config", file}, "", 40 * time.Second},
		{"env beats file", []string{"--config", file}, "50s", 50 * time.Second},
		{"flag beats env", []string{"--config", file, "--request-timeout", "1m"}, "50s", time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FOLIO_CONFIG", "")
			t.Setenv("FOLIO_REQUEST_TIMEOUT", tc.env)
			c, err := loadConfig(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Ops.RequestTimeout; got != tc.want {
				t.Errorf("request timeout %v, want %v", got, tc.want)
			}
		})
	}
	t.Setenv("FOLIO_REQUEST_TIMEOUT", "0s")
	if _, err := loadConfig(nil); err == nil {
		t.Fatal("a request timeout of 0 was accepted")
	}
}
