package apierror

import (
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		value string
		n     int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer value", 8, "a longer…"},
		{"naïve", 3, "na…"}, // ï is two bytes: not cut in half
		{"", 0, ""},
	} {
		got := Clip(tc.value, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.value, tc.n, got, tc.want)
		}
	}
}
