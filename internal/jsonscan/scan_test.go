package jsonscan

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWhole(t *testing.T) {
	good := []string{
		`{}`, ` { "a" : 1 , "b":[1,2,{"c":null}] } `, `[]`, `"x"`, `-0`, `1.5e-3`, `true`, `false`, `null`,
		`"\u00e9\ud83d\ude00\n\"\\\/"`, `{"a":{"b":{"c":[[]]}}}`, "\"é😀\"",
	}
	bad := []string{
		``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `+1`, `tru`, `nul`,
		"\"\xff\"", "{\"a\xc3\":1}", "\"\xed\xa0\x80\"", `"abc`, `"\x"`, `"\u12"`, "\"\x01\"", `{} {}`, `{a:1}`, `[`, `{"a":1 "b":2}`, `-`, `"\`,
	}
	for _, s := range good {
		if _, _, err := Whole([]byte(s)); err != nil {
			t.Errorf("Whole(%q) = %v, want ok", s, err)
		}
	}
	for _, s := range bad {
		if _, _, err := Whole([]byte(s)); err == nil {
			t.Errorf("Whole(%q) ok, want error", s)
		}
	}
}

// A \u escape of a UTF-16 surrogate stands for a character only as the
// high half of a pair followed by the low half; alone it is no text, and is
// refused as invalid UTF-8 is. Both of StringEnd's loops (the run at a
// time and the byte loop after something amiss) check it.
func TestSurrogateEscapes(t *testing.T) {
	long := strings.Repeat("x", 40) // past the run-at-a-time path's first run
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{`"\ud83d\ude00"`, true},
		{`"\uD83D\uDE00"`, true},
		{`"a\ud7ff\ue000b"`, true}, // just outside the surrogates
		{`"\ud800"`, false},
		{`"\udbff"`, false},
		{`"\udc00"`, false},
		{`"\udfff\ud800"`, false}, // low then high: not a pair
		{`"\ud800\ud800"`, false},
		{`"\ud800x"`, false},
		{`"\ud800\n"`, false},
		{`"\ud800\u0041"`, false},
		{`"\ud83d\ude00\ud800"`, false},
		{`"` + long + `\ud800` + long + `"`, false},
		{"\"\xff\\ud800\"", false}, // the byte loop
		{"\"\t\\ud800\"", false},
	} {
		b := []byte(tc.s)
		_, _, err := StringEnd(b, 0)
		if (err == nil) != tc.ok {
			t.Errorf("StringEnd(%s) = %v, want ok %v", tc.s, err, tc.ok)
		}
		_, _, err = stringEndFrom(b, 0, 1, false)
		if (err == nil) != tc.ok {
			t.Errorf("the byte loop on %s: %v, want ok %v", tc.s, err, tc.ok)
		}
		if _, _, err := Whole([]byte(`{"k":` + tc.s + `}`)); (err == nil) != tc.ok {
			t.Errorf("Whole of a document holding %s: %v, want ok %v", tc.s, err, tc.ok)
		}
		if _, _, err := Whole([]byte(`{` + tc.s + `:1}`)); (err == nil) != tc.ok {
			t.Errorf("Whole of a document whose key is %s: %v, want ok %v", tc.s, err, tc.ok)
		}
	}
}

// loneSurrogate reports whether JSON text that encoding/json accepts holds
// a \u escape of a surrogate that is not half of a pair, which
// encoding/json lets through (decoding it to U+FFFD). Backslashes occur
// only in strings in valid JSON.
func loneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++
			continue
		}
		r, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			r2, _ := strconv.ParseUint(string(b[i+8:i+12]), 16, 32)
			if r2 < 0xdc00 || r2 > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

func TestDepth(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, _, err := Whole([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	tooDeep := "[" + ok + "]"
	if _, _, err := Whole([]byte(tooDeep)); err == nil {
		t.Errorf("depth %d accepted", MaxDepth+1)
	}
	if json.Valid([]byte(tooDeep)) {
		t.Errorf("encoding/json accepts depth %d; keep MaxDepth in step", MaxDepth+1)
	}
}

func TestParseInt(t *testing.T) {
	cases := []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"42", 42, true}, {"-42", -42, true},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"1.5", 0, false}, {"1e3", 0, false}, {"", 0, false}, {"-", 0, false}, {"01", 0, false},
		{"99999999999999999999999", 0, false},
	}
	for _, c := range cases {
		n, ok := ParseInt([]byte(c.in))
		if n != c.n || ok != c.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}

func TestObjectReader(t *testing.T) {
	b := []byte(` {"a" : 1, "b\u0041":{"x":[1,2]} ,"c":"s"}`)
	o, err := ObjectAt(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for {
		k, esc, v, ok, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		key := string(k)
		if esc {
			key = Unquote(k)
		}
		keys = append(keys, key)
		e, err := End(b, v)
		if err != nil {
			t.Fatal(err)
		}
		o.Resume(e)
	}
	if got := strings.Join(keys, ","); got != "a,bA,c" {
		t.Errorf("keys = %s", got)
	}
	if o.End() != len(b) {
		t.Errorf("End = %d, want %d", o.End(), len(b))
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "ctl\x01\x1f\n\t\r", "é😀"} {
		q := AppendQuote(nil, s)
		var got string
		if err := json.Unmarshal(q, &got); err != nil || got != s {
			t.Errorf("AppendQuote(%q) = %s: %v %q", s, q, err, got)
		}
	}
}

// FuzzWhole checks the scanner against encoding/json: the same inputs are
// valid, and strings decode to the same text.
func FuzzWhole(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9",true,null]}`, `"\ud83d\ude00"`, `[{"a":{}}]`, `-0.0`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, e, err := Whole(b)
		// JSON text must be UTF-8 (RFC 8259); encoding/json lets invalid
		// bytes and lone surrogate escapes through inside strings, Whole
		// does not.
		if valid := json.Valid(b) && utf8.Valid(b) && !loneSurrogate(b); valid != (err == nil) {
			t.Fatalf("Whole(%q): err=%v, json.Valid=%v", b, err, valid)
		}
		if err != nil {
			return
		}
		s := SkipSpace(b, 0)
		if KindAt(b, s) == String {
			var want string
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if got := Unquote(b[s+1 : e-1]); got != want {
				t.Fatalf("Unquote(%q) = %q, want %q", b, got, want)
			}
		}
		if KindAt(b, s) == Number {
			if _, isInt, _ := NumberEnd(b, s); isInt {
				n, ok := ParseInt(b[s:e])
				want, err := strconv.ParseInt(string(b[s:e]), 10, 64)
				if ok != (err == nil) || ok && n != want {
					t.Fatalf("ParseInt(%q) = %d, %v; strconv: %d, %v", b[s:e], n, ok, want, err)
				}
			}
		}
	})
}

// FuzzStringEnd: the run-at-a-time StringEnd gives what the byte loop
// gives (end, escapes, and the same error) for any bytes.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"plain text, long enough for words"`, `"a\nb\"c\\d\/e\u00e9f"`, `"\u12"`, `"\uzzzz and more"`,
		"\"bad \xff byte in a long string\"", "\"control \x01 character after eight\"", `"unterminated`, `"ends in a backslash\`,
		`"\"`, `"\\"`, `"x\q"`, `"\ud83d\ude00 fine"`, `"\ud800 lone"`, `"\udc00\ud800"`, "\"\xe2\x82\"", `""`, `"abc"def"`} {
		f.Add([]byte(s[1:])) // the target adds the opening quote
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = append([]byte{'"'}, b...)
		end, escaped, err := StringEnd(b, 0)
		wantEnd, wantEscaped, wantErr := stringEndFrom(b, 0, 1, false)
		if end != wantEnd || escaped != wantEscaped || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("StringEnd(%q) = %d, %v, %v; the byte loop gives %d, %v, %v", b, end, escaped, err, wantEnd, wantEscaped, wantErr)
		}
	})
}

// BenchmarkStringEnd: a mail body of 4 KB, a line break escaped every 70
// bytes, skipped run at a time and by the byte loop.
func BenchmarkStringEnd(b *testing.B) {
	line := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do ", 2)[:68] + `\n`
	s := []byte(`"` + strings.Repeat(line, 4096/len(line)) + `"`)
	b.Run("runs", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if _, _, err := StringEnd(s, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if _, _, err := stringEndFrom(s, 0, 1, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// SkipValid ends every valid value where End does, and never reads outside
// its input, whatever it is given.
func FuzzSkipValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9",true,null]}`, `"a\\"`, `"a\\\"b"`, `["]","}",{"k":"\\\\"}]`,
		`{"a":"unterminated`, `[[[`, `"\"`, `{"a":1}}`, `"ok" trailing`, `12`, `nul`, `{"body":"line\nline \"quoted\" \\ end"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		i := SkipSpace(b, 0)
		got, gotErr := SkipValid(b, i)
		if gotErr == nil && (got <= i || got > len(b)) {
			t.Fatalf("SkipValid(%q) = %d: outside the input", b, got)
		}
		want, err := End(b, i)
		if err != nil {
			return
		}
		if gotErr != nil || got != want {
			t.Fatalf("SkipValid(%q) = %d, %v; End gives %d", b, got, gotErr, want)
		}
	})
}

// BenchmarkSkip: a document with a mail body of 4 KB (a line break escaped
// every 70 bytes), skipped by End and by SkipValid.
func BenchmarkSkip(b *testing.B) {
	line := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do ", 2)[:68] + `\n`
	doc := []byte(`{"id":12,"title":"a subject","body":"` + strings.Repeat(line, 4096/len(line)) + `","tag":"spam-1","size":3000}`)
	for _, skip := range []struct {
		name string
		fn   func([]byte, int) (int, error)
	}{{"End", End}, {"SkipValid", SkipValid}} {
		b.Run(skip.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if e, err := skip.fn(doc, 0); err != nil || e != len(doc) {
					b.Fatal(e, err)
				}
			}
		})
	}
}

// Members keeps the members' order and their values as written, the last
// of a name given twice, and refuses what is not one object.
func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in     string
		names  []string
		values map[string]string
		err    bool
	}{
		{in: `{}`, names: nil, values: map[string]string{}},
		{in: ` {"b":1, "a":{"x":[1, 2]},"c":"s"} `, names: []string{"b", "a", "c"},
			values: map[string]string{"b": "1", "a": `{"x":[1, 2]}`, "c": `"s"`}},
		{in: `{"a":1,"b":2,"a":3}`, names: []string{"a", "b"}, values: map[string]string{"a": "3", "b": "2"}},
		{in: `{"\u0061b":true}`, names: []string{"ab"}, values: map[string]string{"ab": "true"}},
		{in: `[1]`, err: true},
		{in: `{"a":1} x`, err: true},
		{in: `{"a":}`, err: true},
		{in: `{"a":1`, err: true},
	} {
		names, values, err := Members[[]byte]([]byte(tc.in))
		if tc.err {
			if err == nil {
				t.Errorf("%s: no error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := map[string]string{}
		for k, v := range values {
			got[k] = string(v)
		}
		if !slices.Equal(names, tc.names) || !maps.Equal(got, tc.values) {
			t.Errorf("%s: %q %q, want %q %q", tc.in, names, got, tc.names, tc.values)
		}
	}
}

// FuzzValidObjectAt: on a valid object, ValidObjectAt reads the members
// ObjectAt reads (names, escapes, value offsets); on any input it stays
// inside it.
func FuzzValidObjectAt(f *testing.F) {
	for _, s := range []string{`{"a":1,"b\"c":[2],"d\\":{"e":"f"}}`, `{}`, ` { "k\u0069" : "v" , "x":null } `, `{"a":`, `{"a" 1}`, `{"\"":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		type member struct {
			key     string
			escaped bool
			value   int
		}
		read := func(valid bool) ([]member, error) {
			at := SkipSpace(b, 0)
			var o ObjectReader
			var err error
			if valid {
				o, err = ValidObjectAt(b, at)
			} else {
				o, err = ObjectAt(b, at)
			}
			if err != nil {
				return nil, err
			}
			var out []member
			for {
				key, escaped, value, ok, err := o.Next()
				if err != nil || !ok {
					return out, err
				}
				if value > len(b) {
					t.Fatalf("%q: value at %d, outside the input", b, value)
				}
				out = append(out, member{string(key), escaped, value})
				end, err := SkipValid(b, value)
				if err != nil {
					return out, err
				}
				o.Resume(end)
			}
		}
		got, gotErr := read(true)
		if _, _, err := Whole(b); err != nil {
			return // not valid JSON: only bounds are promised
		}
		want, err := read(false)
		if err != nil {
			return // valid JSON, not an object
		}
		if gotErr != nil || len(got) != len(want) {
			t.Fatalf("%q: ValidObjectAt read %v, %v; ObjectAt %v", b, got, gotErr, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: member %d is %+v, ObjectAt reads %+v", b, i, got[i], want[i])
			}
		}
	})
}
