package streams

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
)

// Cursor is a place in the change log between two records: everything at
// or before it has been seen. A log entry is one committed transaction, so
// a cursor names the entry (its commit position) and the index of the last
// record of that entry seen. Index counts every record of the entry, not
// only those a stream selected. The cursor of a stream's last event of a
// transaction is the whole entry (After): the rest of the entry holds
// nothing for that stream.
type Cursor struct {
	Pos   kv.Position
	Index uint32
}

// wholeEntry as a cursor's Index means "after every record of the entry".
const wholeEntry = math.MaxUint32

// After is the cursor just after the commit at pos: a stream started there
// sees the commits after pos and nothing of pos itself.
func After(pos kv.Position) Cursor { return Cursor{Pos: pos, Index: wholeEntry} }

// before reports whether the record at index i of the entry at pos comes
// after the cursor, that is whether a stream at c has not seen it yet.
func (c Cursor) before(pos kv.Position, i int) bool {
	return pos > c.Pos || (pos == c.Pos && c.Index != wholeEntry && uint32(i) > c.Index)
}

// readAfter is the position to give ReadLog to get every entry that may
// hold a record after c.
func (c Cursor) readAfter() kv.Position {
	if c.Index == wholeEntry || c.Pos == 0 {
		return c.Pos
	}
	return c.Pos - 1
}

// A token is the cursor as the API shows it: opaque to clients, and as
// durable as the log, so a client may keep it across server restarts. Its
// bytes are a version, the position (8 bytes, big-endian) and the index
// (4 bytes, big-endian), base64url without padding.
const (
	tokenVersion = 1
	tokenSize    = 13
)

// String is the cursor's token.
func (c Cursor) String() string {
	var b [tokenSize]byte
	b[0] = tokenVersion
	binary.BigEndian.PutUint64(b[1:], uint64(c.Pos))
	binary.BigEndian.PutUint32(b[9:], c.Index)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseCursor reads a token made by Cursor.String. A malformed one is an
// INVALID_ARGUMENT error naming the option it came in (what).
func ParseCursor(what, token string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != tokenSize || b[0] != tokenVersion {
		return Cursor{}, apierror.Errorf(apierror.InvalidArgument, "%s '%s' is not a position this server gave out", what, token)
	}
	return Cursor{Pos: kv.Position(binary.BigEndian.Uint64(b[1:])), Index: binary.BigEndian.Uint32(b[9:])}, nil
}

// TxID is the id the API shows for the transaction committed at pos: the
// position's 8 bytes, big-endian. Every event of one commit has the same.
func TxID(pos kv.Position) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(pos))
}

// GoString helps test failures print cursors readably.
func (c Cursor) GoString() string {
	if c.Index == wholeEntry {
		return fmt.Sprintf("After(%d)", c.Pos)
	}
	return fmt.Sprintf("Cursor{%d, %d}", c.Pos, c.Index)
}
