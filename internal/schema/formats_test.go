package schema

import "testing"

// The edges of date-time: the first day of a month, the widest offsets,
// a missing zone, fractional seconds at the end of the string, leap
// seconds with offsets.
func TestValidDateTimeEdges(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"2022-01-01T00:00:00Z", true},
		{"2022-01-00T00:00:00Z", false},
		{"2022-01-31T00:00:00Z", true},
		{"2022-01-32T00:00:00Z", false},
		{"2022-12-01T23:59:59+23:59", true},
		{"2022-12-01T23:59:59-23:59", true},
		{"2022-12-01T23:59:59+24:00", false},
		{"2022-12-01T23:59:59+23:60", false},
		{"2022-12-01T00:00:00", false},     // no zone
		{"2022-12-01T00:00:00.123", false}, // fraction, no zone
		{"2022-12-01T00:00:00.123Z", true}, // fraction
		{"2022-12-01T00:00:00.Z", false},   // no fraction digits
		{"2022-12-01T00:00:00.5+01:00", true},
		// A leap second is valid at 23:59:60 UTC only, whatever the offset.
		{"1990-12-31T18:29:60-05:30", true},
		{"1991-01-01T09:59:60+10:00", true},
		{"1991-01-01T09:58:60+10:00", false},
	} {
		if got := validDateTime([]byte(tc.s)); got != tc.ok {
			t.Errorf("validDateTime(%q) = %v, want %v", tc.s, got, tc.ok)
		}
	}
}

// Leap years: every fourth, but not centuries, except every fourth century.
func TestLeapYears(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"2004-02-29T00:00:00Z", true},
		{"2003-02-29T00:00:00Z", false},
		{"1900-02-29T00:00:00Z", false},
		{"2000-02-29T00:00:00Z", true},
		{"2100-02-28T00:00:00Z", true},
	} {
		if got := validDateTime([]byte(tc.s)); got != tc.ok {
			t.Errorf("validDateTime(%q) = %v, want %v", tc.s, got, tc.ok)
		}
	}
}
