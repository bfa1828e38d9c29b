package jsondoc

import "github.com/foliodb/folio/internal/jsonscan"

// Project returns doc with only the top-level members named in include (in
// the document's own order), or without those in exclude; with both empty
// it returns doc itself. Documents and messages are projected by this one
// rule.
func Project(doc []byte, include, exclude map[string]bool) ([]byte, error) {
	if len(include) == 0 && len(exclude) == 0 {
		return doc, nil
	}
	ms, _, err := Members(doc, jsonscan.SkipSpace(doc, 0))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(doc))
	out = append(out, '{')
	for _, m := range ms {
		if (len(include) > 0 && !include[m.Key]) || exclude[m.Key] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, doc[m.Start:m.End]...)
	}
	return append(out, '}'), nil
}
