package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"serve", "serve", 0}, {"sevre", "serve", 1},
		{"serv", "serve", 1}, {"servee", "serve", 1}, {"sarve", "serve", 1}, {"ca", "abc", 3},
		{"insert", "inesrt", 1}, {"kitten", "sitting", 3}, {"primary_keys", "primary_key", 1},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	schema := []string{"title", "description", "properties", "primary_key", "collection_type"}
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"primary_keys", schema, "primary_key"},
		{"primarykey", schema, "primary_key"},
		{"Primary_Key", schema, "primary_key"}, // case is free
		{"propertes", schema, "properties"},
		{"collectiontype", schema, "collection_type"},
		{"ttl", schema, ""}, // three edits from title: unrelated, not a typo
		{"foo", schema, ""},
		{"titel", schema, "title"}, // a swap
		{"nmae", []string{"id", "name", "age"}, "name"},
		{"aeg", []string{"id", "name", "age"}, "age"},
		{"ag", []string{"id", "name", "age"}, "age"},
		{"xy", []string{"id"}, ""}, // two edits of two letters: anything
		{"lmit", []string{"limit", "skip"}, "limit"},
		{"sevre", []string{"serve", "bench"}, "serve"},
		{"xyzzy", []string{"serve", "bench"}, ""},
		{"ab", []string{"ac", "ab0"}, "ac"},                                  // equally close: the first
		{string(make([]byte, 100)), []string{string(make([]byte, 100))}, ""}, // too long to look at
		{"x", nil, ""},
	} {
		if got := Closest(tc.word, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func TestHint(t *testing.T) {
	if got := Hint("primary_keys", []string{"primary_key"}); got != " (did you mean 'primary_key'?)" {
		t.Errorf("Hint = %q", got)
	}
	if got := Hint("foo", []string{"primary_key"}); got != "" {
		t.Errorf("Hint of a far word = %q, want none", got)
	}
}
