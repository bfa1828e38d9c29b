package keyspace

import (
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

func TestMessageKey(t *testing.T) {
	for _, tc := range []struct{ coll, part, nanos, node int64 }{
		{1, 0, 0, 0},
		{7, 0, 1_700_000_000_123_456_789, -42},
		{1 << 40, 3, -1, 1 << 62},
	} {
		key := Message(tc.coll, tc.part, tc.nanos, tc.node)
		part, nanos, err := MessageKey(key)
		if err != nil || part != tc.part || nanos != tc.nanos {
			t.Errorf("MessageKey(Message(%v)) = %d, %d, %v", tc, part, nanos, err)
		}
		if !contains(MessagePartition(tc.coll, tc.part), key) || !contains(Messages(tc.coll), key) {
			t.Errorf("message %v outside its ranges", tc)
		}
		if contains(Messages(tc.coll+1), key) || contains(Documents(tc.coll), key) {
			t.Errorf("message %v inside another collection's range", tc)
		}
	}
	if _, _, err := MessageKey(Size(1)); err == nil {
		t.Error("MessageKey accepted a counter key")
	}
}

// Messages are ordered by time within a partition.
func TestMessageOrder(t *testing.T) {
	if kv.CompareKeys(Message(1, 0, 5, 9), Message(1, 0, 6, 0)) >= 0 {
		t.Error("an earlier message sorts after a later one")
	}
}

// Dropping a collection clears its messages.
func TestCollectionDataHoldsMessages(t *testing.T) {
	key := Message(3, 0, 1, 1)
	for _, r := range CollectionData(3) {
		if contains(r, key) {
			return
		}
	}
	t.Error("CollectionData does not cover the collection's messages")
}

func contains(r kv.Range, key []byte) bool {
	return kv.CompareKeys(key, r.Begin) >= 0 && (r.End == nil || kv.CompareKeys(key, r.End) < 0)
}
