package documents

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/foliodb/folio/internal/filter"
)

// A document is stored as a record: a version byte, the creation and update
// times in Unix nanoseconds (big-endian; 0 for "never updated"), then the
// document's JSON exactly as the client sent it.
const (
	recordVersion    = 1
	recordHeaderSize = 17
)

// Record is a stored document with its times.
type Record struct {
	CreatedAt time.Time
	UpdatedAt time.Time // zero until the document is updated
	Data      []byte
}

func encodeRecord(created, updated time.Time, data []byte) []byte {
	b := make([]byte, recordHeaderSize+len(data))
	b[0] = recordVersion
	binary.BigEndian.PutUint64(b[1:], uint64(created.UnixNano()))
	if !updated.IsZero() {
		binary.BigEndian.PutUint64(b[9:], uint64(updated.UnixNano()))
	}
	copy(b[recordHeaderSize:], data)
	return b
}

var errCorruptRecord = errors.New("docs: corrupt document record")

// decodeRecord reads a record; Data aliases b.
func decodeRecord(b []byte) (Record, error) {
	if len(b) < recordHeaderSize || b[0] != recordVersion {
		return Record{}, errCorruptRecord
	}
	r := Record{
		CreatedAt: time.Unix(0, int64(binary.BigEndian.Uint64(b[1:]))).UTC(),
		Data:      b[recordHeaderSize:],
	}
	if u := int64(binary.BigEndian.Uint64(b[9:])); u != 0 {
		r.UpdatedAt = time.Unix(0, u).UTC()
	}
	return r, nil
}

// recordData returns the document a record holds, for the planner.
func recordData(b []byte) ([]byte, error) {
	r, err := decodeRecord(b)
	return r.Data, err
}

// recordTimes returns the times a record holds, for the planner's checks
// of _tigris_created_at and _tigris_updated_at.
func recordTimes(b []byte) filter.Times {
	r, _ := decodeRecord(b) // recordData reports a bad record
	return filter.Times{Created: r.CreatedAt, Updated: r.UpdatedAt}
}

// DecodeRecord reads a stored document record, for the readers of the
// documents outside this package (the search indexer's rebuild); Data
// aliases b.
func DecodeRecord(b []byte) (Record, error) { return decodeRecord(b) }
