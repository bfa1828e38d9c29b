package client

// Option tunes a call: each call's documentation says which it reads; the
// others are ignored.
type Option func(*options)

type options struct {
	limit, skip     int64
	fields          []string
	sort            []SortField
	offset          string
	caseInsensitive bool
	startAfter      string
	filter          Filter
}

// Limit bounds the documents a read returns, or an update or delete
// changes (the first in primary-key order).
func Limit(n int64) Option { return func(o *options) { o.limit = n } }

// Skip skips the first n matching documents of a read.
func Skip(n int64) Option { return func(o *options) { o.skip = n } }

// Fields returns only these fields of each document read.
func Fields(names ...string) Option { return func(o *options) { o.fields = names } }

// Sort orders a read's documents (default: primary-key order).
func Sort(by ...SortField) Option { return func(o *options) { o.sort = by } }

// After continues a read after the document whose ResumeToken it is.
func After(resumeToken string) Option { return func(o *options) { o.offset = resumeToken } }

// CaseInsensitive makes a filter's string comparisons ignore case.
func CaseInsensitive() Option { return func(o *options) { o.caseInsensitive = true } }

// StartAfter starts an events or subscribe stream right after the item
// at position (an Event's or Message's Position), also one received
// before a restart of the server; without it the stream starts now.
func StartAfter(position string) Option { return func(o *options) { o.startAfter = position } }

// Matching narrows an events stream to the changes of the documents filter
// matches, before or after the change: an Event with LeftFilter set is one
// that took its document out of the filter.
func Matching(filter Filter) Option { return func(o *options) { o.filter = filter } }

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// collation is the API's collation member.
type collation struct {
	Case string `json:"case"`
}

func (o options) collation() *collation {
	if o.caseInsensitive {
		return &collation{Case: "ci"}
	}
	return nil
}
