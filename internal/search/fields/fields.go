// Package fields is the layout of a document in a search index: the Bleve
// fields a stored document is indexed as (BuildDocument), the names of
// their shadows, and how their terms encode values. The indexer writes
// this layout, the translation of requests names its fields, and the
// engine reads its terms; a change to it is a new index format
// (search.indexFormat), which rebuilds every index.
package fields

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	bnumeric "github.com/blevesearch/bleve/v2/numeric"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/schema"
)

// The Bleve fields of a document field at dot path p:
//
//	p        the value itself: analyzed text (string), a number (integers
//	         and numbers), a bool, a date-time; what text queries, numeric
//	         ranges, bool queries and sorts on those types use
//	$kw.p    the exact value as one term (keyword), with doc values: string
//	         filters and ranges, facets and string sorts; the canonical
//	         decimal of numbers (for facet values), uuids and date-times as
//	         written, bytes as hex (so that term order is byte order); cut
//	         to its first 128 bytes (CutTerm)
//	$ci.p    strings only: the folded value as one term, for
//	         case-insensitive filters; cut the same way
//	$num.p   numbers only: the value as one 16-hex-digit term in sort order,
//	         with doc values: sorts and facet stats (p's own doc values
//	         would hold all 16 of Bleve's prefix-coded terms of a number,
//	         eight times the bytes to decode for every match)
//
// A field name cannot start with "$" (the filter language keeps those), so
// no shadow can collide with a document field. Every document is indexed
// with the schema current when the indexer sees it: the fields come from
// the schema, not from a Bleve mapping fixed when the index was created, so
// a field added by a schema change is indexed from the next write on,
// without a rebuild or a reopen (documents written before the change do not
// hold the field, so there is nothing in them to index).
const (
	KeywordPrefix = "$kw."
	FoldedPrefix  = "$ci."
	NumberPrefix  = "$num."
)

func Keyword(path string) string { return KeywordPrefix + path }
func Folded(path string) string  { return FoldedPrefix + path }
func Number(path string) string  { return NumberPrefix + path }

// numberTerm is x as 16 hex digits whose byte order is x's order
// (Bleve's sortable int64, sign bit flipped, big-endian); NumberOf reads
// it back. Hex, not the 8 bytes: doc values separate a document's terms
// with the byte 0xff, which raw bytes may hold.
func numberTerm(x float64) []byte {
	return hex.AppendEncode(nil, binary.BigEndian.AppendUint64(nil, NumberKey(x)))
}

func NumberOf(term []byte) (float64, bool) {
	var raw [8]byte
	if len(term) != 16 {
		return 0, false
	}
	if _, err := hex.Decode(raw[:], term); err != nil {
		return 0, false
	}
	return bnumeric.Int64ToFloat64(int64(binary.BigEndian.Uint64(raw[:]) ^ (1 << 63))), true
}

// Indexing options: text is analyzed with positions (phrases need them);
// keywords keep doc values for facets and sorts. A number is indexed only
// as its $num. shadow (one term, with doc values): sorts, stats and
// ranges (the engine's columns) all read that.
const (
	textOptions    = bindex.IndexField | bindex.IncludeTermVectors
	keywordOptions = bindex.IndexField | bindex.DocValues
	foldedOptions  = bindex.IndexField
	boolOptions    = bindex.IndexField | bindex.DocValues
	dateOptions    = bindex.IndexField | bindex.DocValues
)

// Analyzers are the two analyzers fields are built with.
type Analyzers struct {
	Text    analysis.Analyzer // "standard": unicode words, lower-cased, English stop words removed
	Keyword analysis.Analyzer // the whole value as one term
}

// SharedAnalyzers are built once for the process: building the standard
// analyzer loads its stop-word map, which a search did on every request
// (a fifth of a rare word's search).
var SharedAnalyzers = sync.OnceValues(buildAnalyzers)

func buildAnalyzers() (Analyzers, error) {
	m := bleve.NewIndexMapping()
	text := m.AnalyzerNamed("standard")
	kw := m.AnalyzerNamed("keyword")
	if text == nil || kw == nil {
		return Analyzers{}, errors.New("search: the standard and keyword analyzers are not registered")
	}
	return Analyzers{Text: text, Keyword: kw}, nil
}

// DocID is a storage key as a Bleve document id: hex, which keeps the
// keys' byte order and survives every text path Bleve has.
func DocID(key []byte) string { return hex.EncodeToString(key) }

func KeyOf(id string) ([]byte, error) { return hex.DecodeString(id) }

// BuildDocument turns a stored document into the Bleve document indexed
// under its storage key, following the schema's fields. Values of the
// wrong type for their field (possible only for data written before a
// schema change) are left out rather than failing the whole log.
func BuildDocument(key, data []byte, s *schema.Schema, an Analyzers) (*document.Document, error) {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("search: document at %x: %w", key, err)
	}
	d := document.NewDocument(DocID(key))
	b := builder{doc: d, an: an}
	for _, f := range s.Fields() {
		b.add(f, root[f.Name], nil)
	}
	return d, nil
}

type builder struct {
	doc *document.Document
	an  Analyzers
}

func (b *builder) add(f *schema.Field, v any, pos []uint64) {
	if v == nil {
		return
	}
	switch f.Type {
	case schema.String:
		s, ok := v.(string)
		if !ok {
			return
		}
		b.text(f.Path, pos, s)
		b.keyword(f.Path, pos, s)
		folded, _ := CutTerm(index.Fold(s))
		b.doc.AddField(document.NewTextFieldCustom(Folded(f.Path), pos, []byte(folded), foldedOptions, b.an.Keyword))
	case schema.UUID:
		if s, ok := v.(string); ok {
			b.keyword(f.Path, pos, s)
		}
	case schema.DateTime:
		s, ok := v.(string)
		if !ok {
			return
		}
		b.keyword(f.Path, pos, s)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			if fd, err := document.NewDateTimeFieldWithIndexingOptions(f.Path, pos, t, time.RFC3339Nano, dateOptions); err == nil {
				b.doc.AddField(fd)
			}
		}
	case schema.Bytes:
		s, ok := v.(string)
		if !ok {
			return
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return
		}
		b.keyword(f.Path, pos, hex.EncodeToString(raw))
	case schema.Int32, schema.Int64, schema.Number:
		n, ok := v.(json.Number)
		if !ok {
			return
		}
		x, canon, ok := number(n, f.Type)
		if !ok {
			return
		}
		b.doc.AddField(document.NewTextFieldCustom(Number(f.Path), pos, numberTerm(x), keywordOptions, b.an.Keyword))
		b.keyword(f.Path, pos, canon)
	case schema.Bool:
		if t, ok := v.(bool); ok {
			b.doc.AddField(document.NewBooleanFieldWithIndexingOptions(f.Path, pos, t, boolOptions))
		}
	case schema.Array:
		items, ok := v.([]any)
		// A vector is no searchable text, nor a value to filter or facet
		// on: its numbers would only cost terms (the vector index is its
		// own structure).
		if !ok || f.Items == nil || f.Vector {
			return
		}
		for i, item := range items {
			b.add(f.Items, item, append(pos[:len(pos):len(pos)], uint64(i)))
		}
	case schema.Object:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, p := range f.Properties {
			b.add(p, obj[p.Name], pos)
		}
	}
}

func (b *builder) text(path string, pos []uint64, s string) {
	b.doc.AddField(document.NewTextFieldCustom(path, pos, []byte(s), textOptions, b.an.Text))
}

func (b *builder) keyword(path string, pos []uint64, s string) {
	s, _ = CutTerm(s)
	b.doc.AddField(document.NewTextFieldCustom(Keyword(path), pos, []byte(s), keywordOptions, b.an.Keyword))
}

// CutTerm cuts a $kw. or $ci. term to its first index.MaxValueBytes
// bytes, as the store's own index cuts its entries: a long value (a text
// body) as a whole term made the term dictionaries' FSTs, built at every
// write and rebuilt at every merge, most of the cost of indexing, for
// filters, facets and sorts that hardly ever use whole texts. loose
// reports a value at or past the limit: a comparison with it must widen
// (see translate.comparison), and the documents' own check makes the hits exact.
func CutTerm(s string) (_ string, loose bool) {
	if len(s) >= index.MaxValueBytes {
		return s[:index.MaxValueBytes], true
	}
	return s, false
}

// number reads a JSON number of a numeric field: its value as Bleve holds
// numbers (float64: integers beyond 2^53 are rounded) and its canonical
// decimal, the facet value (integers exact).
func number(n json.Number, t schema.Type) (float64, string, bool) {
	if t != schema.Number {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return float64(i), strconv.FormatInt(i, 10), true
		}
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, "", false
	}
	return x, strconv.FormatFloat(x, 'g', -1, 64), true
}

// NumberKey is x's sortable key: Bleve's sortable int64 with its sign bit
// flipped, so that keys order as numbers do. Zero has one key: -0 == 0.
// A $num. term is the key as 16 hex digits (KeyTerm).
func NumberKey(x float64) uint64 {
	if x == 0 {
		x = 0
	}
	return uint64(bnumeric.Float64ToInt64(x)) ^ (1 << 63)
}

// KeyOfTerm is the key a $num. term holds.
func KeyOfTerm(term string) (uint64, bool) {
	var raw [8]byte
	if len(term) != 16 {
		return 0, false
	}
	if _, err := hex.Decode(raw[:], []byte(term)); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(raw[:]), true
}

// KeyTerm is the $num. term of the key k.
func KeyTerm(k uint64) string {
	return hex.EncodeToString(binary.BigEndian.AppendUint64(nil, k))
}
