package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// record is one document of the input, where it was, and where the next
// one starts (the byte offset a resumed import seeks to).
type record struct {
	doc   json.RawMessage // JSON lines: the object as written
	cells []string        // CSV: the row, typed into doc by csvReader.document
	line  int
	end   int64
}

// badRecord is input that is no document; --skip-bad skips it.
type badRecord struct {
	line int
	why  string
}

func (e badRecord) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.why) }

// recordReader reads an input's records; io.EOF ends them.
type recordReader interface {
	next() (record, error)
	// document is a record as the JSON object to write.
	document(record) (json.RawMessage, error)
}

// jsonlReader reads JSON lines: one object a line, blank lines ignored.
type jsonlReader struct {
	rd     *bufio.Reader
	line   int
	offset int64
}

func (r *jsonlReader) next() (record, error) {
	for {
		raw, err := r.rd.ReadBytes('\n')
		if len(raw) == 0 && err != nil {
			return record{}, err
		}
		r.line++
		r.offset += int64(len(raw))
		text := bytes.TrimSpace(raw)
		if len(text) == 0 {
			continue
		}
		if text[0] != '{' || !json.Valid(text) {
			return record{}, badRecord{r.line, "not a JSON object: " + cut(string(text), 40)}
		}
		return record{doc: text, line: r.line, end: r.offset}, nil
	}
}

func (r *jsonlReader) document(rec record) (json.RawMessage, error) { return rec.doc, nil }

// csvReader reads CSV whose first row names the fields; each cell is
// typed by its field's type (types), empty cells are left out.
type csvReader struct {
	r        *csv.Reader
	header   []string
	types    map[string]string // a field's schema type; a string if none
	baseLine int               // lines before r's input, when resumed
	base     int64             // bytes before r's input
}

func (r *csvReader) next() (record, error) {
	cells, err := r.r.Read()
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return record{}, badRecord{r.baseLine + pe.Line, pe.Err.Error()}
	}
	if err != nil {
		return record{}, err
	}
	if len(cells) != len(r.header) {
		line, _ := r.r.FieldPos(0)
		return record{}, badRecord{r.baseLine + line, fmt.Sprintf("%d fields, the header names %d", len(cells), len(r.header))}
	}
	line, _ := r.r.FieldPos(0)
	return record{cells: cells, line: r.baseLine + line, end: r.base + r.r.InputOffset()}, nil
}

func (r *csvReader) document(rec record) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteString("{")
	for i, cell := range rec.cells {
		if cell == "" {
			continue
		}
		v, err := typedCell(cell, r.types[r.header[i]])
		if err != nil {
			return nil, badRecord{rec.line, fmt.Sprintf("field %s: %v", r.header[i], err)}
		}
		if b.Len() > 1 {
			b.WriteString(",")
		}
		name, _ := json.Marshal(r.header[i])
		b.Write(name)
		b.WriteString(":")
		b.Write(v)
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// typedCell is a CSV cell as the JSON value of a field of type typ.
func typedCell(cell, typ string) (json.RawMessage, error) {
	switch typ {
	case "integer":
		if _, err := strconv.ParseInt(cell, 10, 64); err != nil {
			return nil, fmt.Errorf("%q is not an integer", cut(cell, 40))
		}
		return json.RawMessage(cell), nil
	case "number":
		f, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", cut(cell, 40))
		}
		return json.Marshal(f)
	case "boolean":
		switch strings.ToLower(cell) {
		case "true":
			return json.RawMessage("true"), nil
		case "false":
			return json.RawMessage("false"), nil
		}
		return nil, fmt.Errorf("%q is not true or false", cut(cell, 40))
	case "object", "array":
		if !json.Valid([]byte(cell)) {
			return nil, fmt.Errorf("%q is not JSON", cut(cell, 40))
		}
		return json.RawMessage(cell), nil
	}
	return json.Marshal(cell)
}

// csvColumnTypes infers a type for each column of a sample of rows: the
// narrowest of integer, number and boolean that every non-empty cell is,
// else string (a date-time is a string to the schema's inference).
func csvColumnTypes(header []string, rows []record) map[string]string {
	types := make(map[string]string, len(header))
	for i, name := range header {
		fits := map[string]bool{"integer": true, "number": true, "boolean": true}
		seen := false // a column of empty cells says nothing: a string
		for _, row := range rows {
			cell := row.cells[i]
			if cell == "" {
				continue
			}
			seen = true
			for typ := range fits {
				if _, err := typedCell(cell, typ); err != nil {
					delete(fits, typ)
				}
			}
		}
		types[name] = "string"
		for _, typ := range []string{"integer", "number", "boolean"} {
			if seen && fits[typ] {
				types[name] = typ
				break
			}
		}
	}
	return types
}

// schemaTypes are the types of a schema's top-level fields.
func schemaTypes(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	types := make(map[string]string, len(s.Properties))
	for name, p := range s.Properties {
		types[name] = p.Type
	}
	return types
}

// cut shortens s for a message.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
