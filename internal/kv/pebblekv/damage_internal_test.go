package pebblekv

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Damage to a file is logged at once, then at most every damageLogEvery,
// each line counting the reports since the one before.
func TestDamageLogCountsReports(t *testing.T) {
	var logs bytes.Buffer
	d := newDamage(slog.New(slog.NewTextHandler(&logs, nil)))
	info := pebble.DataCorruptionInfo{Path: "000007.sst", Details: errors.New("checksum mismatch")}
	d.report(info)
	d.report(info)
	d.report(info)
	if n := strings.Count(logs.String(), "damaged data found"); n != 1 {
		t.Fatalf("three reports at once logged %d lines, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "reports=1 ") {
		t.Errorf("the first line does not count one report:\n%s", logs.String())
	}
	d.mu.Lock()
	d.files[info.Path].loggedAt = time.Now().Add(-damageLogEvery)
	d.mu.Unlock()
	logs.Reset()
	d.report(info)
	if !strings.Contains(logs.String(), "reports=3 ") {
		t.Errorf("the line after the bound does not count the two reports unlogged and its own:\n%s", logs.String())
	}
}
