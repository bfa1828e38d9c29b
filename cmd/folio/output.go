package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/jsonscan"
)

// printer writes a command's records: JSON lines (each record as the
// server sent it, compacted), or, for a person at a terminal, tables.
type printer struct {
	w     io.Writer
	table bool
}

// tableBatch is how many rows a table holds before it is printed: a long
// read starts printing early, in tables of this many rows.
const tableBatch = 500

// records prints JSON objects. A table has the given columns, or, with
// none, every top-level field in order of first appearance.
func (p *printer) records(recs []json.RawMessage, columns ...string) error {
	if !p.table {
		for _, r := range recs {
			if err := p.line(r); err != nil {
				return err
			}
		}
		return nil
	}
	for len(recs) > 0 {
		n := min(len(recs), tableBatch)
		if err := p.printTable(recs[:n], columns); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// line prints one JSON value on a line of its own.
func (p *printer) line(v json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return fmt.Errorf("the server sent JSON that is not: %w", err)
	}
	b.WriteByte('\n')
	_, err := p.w.Write(b.Bytes())
	return err
}

// value prints a JSON value of any shape (a JSON line, or a table).
func (p *printer) value(v any, columns ...string) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return p.records([]json.RawMessage{b}, columns...)
}

// stream prints records as they come: JSON lines, or on a terminal one
// row a record, without alignment (a stream has no end to align to).
func (p *printer) stream(rec json.RawMessage, columns ...string) error {
	if !p.table {
		return p.line(rec)
	}
	_, fields, err := objectFields(rec)
	if err != nil {
		return err
	}
	cells := make([]string, len(columns))
	for i, c := range columns {
		cells[i] = tableCell(fields[c])
	}
	_, err = fmt.Fprintln(p.w, strings.Join(cells, "  "))
	return err
}

// message prints a line of text for a person, or a JSON record.
func (p *printer) message(rec map[string]any, text string) error {
	if p.table {
		_, err := fmt.Fprintln(p.w, text)
		return err
	}
	return p.value(rec)
}

func (p *printer) printTable(recs []json.RawMessage, columns []string) error {
	rows := make([]map[string]json.RawMessage, len(recs))
	fixed := len(columns) > 0
	seen := map[string]bool{}
	for i, r := range recs {
		order, fields, err := objectFields(r)
		if err != nil {
			return err
		}
		rows[i] = fields
		if !fixed {
			for _, f := range order {
				if !seen[f] {
					seen[f] = true
					columns = append(columns, f)
				}
			}
		}
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(columns, "\t")))
	for _, row := range rows {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = tableCell(row[c])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// objectFields reads a JSON object's members, in order. A value that is
// not an object is one field named "value".
func objectFields(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if jsonscan.KindAt(raw, jsonscan.SkipSpace(raw, 0)) != jsonscan.Object {
		if _, _, err := jsonscan.Whole(raw); err != nil {
			return nil, nil, fmt.Errorf("the server sent JSON that is not: %w", err)
		}
		return []string{"value"}, map[string]json.RawMessage{"value": raw}, nil
	}
	order, fields, err := jsonscan.Members[json.RawMessage](raw)
	if err != nil {
		return nil, nil, fmt.Errorf("the server sent JSON that is not: %w", err)
	}
	return order, fields, nil
}

// maxCell is how many characters a table's cell shows.
const maxCell = 60

// tableCell is a JSON value as a table shows it: strings unquoted, the rest
// as compact JSON, long values cut; "-" for a field the record lacks.
func tableCell(v json.RawMessage) string {
	if v == nil {
		return "-"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' || r == '\r' {
				return ' '
			}
			return r
		}, s)
	} else {
		var b bytes.Buffer
		if json.Compact(&b, v) != nil {
			return string(v)
		}
		s = b.String()
	}
	if utf8.RuneCountInString(s) > maxCell {
		s = string([]rune(s)[:maxCell-1]) + "…"
	}
	return s
}
