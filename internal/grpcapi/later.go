package grpcapi

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The requests are decoded with alpha.32's messages. Clients of the same
// /v1/databases era but later (Go up to beta.13, TypeScript
// @tigrisdata/core up to 1.0.0-beta.21) send a few fields those messages
// lack; protobuf keeps them as unknown fields, and the few that change what
// a call does are read from there, by their numbers in the later
// published definitions (as @tigrisdata/core 1.0.0-beta.21's generated
// messages number them), rather than dropped: without them @tigrisdata/core's
// updateOne and deleteOne (which send limit 1) would change every match,
// its subscribeWithFilter would get every message, and a later Go client's
// sorted read would come in primary-key order.
const (
	// UpdateRequestOptions.limit and DeleteRequestOptions.limit (int64).
	fieldOptionsLimit protowire.Number = 3
	// SubscribeRequest.filter (bytes holding JSON).
	fieldSubscribeFilter protowire.Number = 4
	// ReadRequest.sort (bytes holding JSON).
	fieldReadSort protowire.Number = 6
)

// unknownVarint is the last value of field num among m's unknown fields,
// as protobuf takes the last of a repeated scalar; 0 if there is none.
func unknownVarint(m proto.Message, num protowire.Number) int64 {
	var v int64
	eachUnknown(m, func(n protowire.Number, typ protowire.Type, b []byte) int {
		if n != num || typ != protowire.VarintType {
			return protowire.ConsumeFieldValue(n, typ, b)
		}
		x, l := protowire.ConsumeVarint(b)
		if l >= 0 {
			v = int64(x)
		}
		return l
	})
	return v
}

// unknownBytes is the last value of the length-delimited field num among
// m's unknown fields; nil if there is none.
func unknownBytes(m proto.Message, num protowire.Number) []byte {
	var v []byte
	eachUnknown(m, func(n protowire.Number, typ protowire.Type, b []byte) int {
		if n != num || typ != protowire.BytesType {
			return protowire.ConsumeFieldValue(n, typ, b)
		}
		x, l := protowire.ConsumeBytes(b)
		if l >= 0 {
			v = x
		}
		return l
	})
	return v
}

// eachUnknown walks m's unknown fields, calling value with each field's
// number, type and the bytes from its value on; value returns the length
// of the value, negative to stop (malformed bytes: the rest is ignored, as
// the message itself was decoded already).
func eachUnknown(m proto.Message, value func(protowire.Number, protowire.Type, []byte) int) {
	if m == nil || !m.ProtoReflect().IsValid() {
		return
	}
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return
		}
		b = b[l:]
		if l = value(n, typ, b); l < 0 {
			return
		}
		b = b[l:]
	}
}
