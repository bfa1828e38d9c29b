package ops

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// levels is a slog handler that keeps the level of each line and whether
// it was marked slow.
type levels struct{ lines []string }

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *levels) WithGroup(string) slog.Handler            { return l }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String()
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "slow" {
			line += " slow"
		}
		return true
	})
	l.lines = append(l.lines, line)
	return nil
}

// A request is logged as slow (warn, with its plans) once it takes
// SlowRequest or longer, never when SlowRequest is 0 or less, and never a
// stream, long by design.
func TestLogRequestSlow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slow     time.Duration
		took     time.Duration
		stream   bool
		wantLine string
	}{
		{"past the bound", time.Second, 2 * time.Second, false, "WARN slow"},
		{"at the bound", time.Second, time.Second, false, "WARN slow"},
		{"under the bound", time.Second, time.Second - time.Millisecond, false, "DEBUG"},
		{"bound 0: none slow", 0, time.Hour, false, "DEBUG"},
		{"negative bound: none slow", -time.Second, time.Hour, false, "DEBUG"},
		{"a stream", time.Second, time.Hour, true, "DEBUG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &levels{}
			o := New(Config{Logger: slog.New(h), Options: Options{SlowRequest: tc.slow}})
			ctx, _ := o.StartRequest(context.Background(), "")
			o.LogRequest(ctx, RequestRecord{Transport: TransportHTTP, Method: "POST", Path: "/v1/x", Status: 200, Duration: tc.took, Stream: tc.stream})
			if len(h.lines) != 1 || h.lines[0] != tc.wantLine {
				t.Errorf("logged %q, want one line %q", h.lines, tc.wantLine)
			}
		})
	}
}
