package apitest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// An events stream and a subscription wait for changes as long as their
// clients like: the body timeout (their bodies came long ago), the write
// timeout (nothing is being written) and the request timeout (which bounds
// every call but the streams) do not end them, however long they stay
// idle, over HTTP/1.1 and over HTTP/2 (h2c), and they still deliver what
// is written afterwards.
//
// The streams are served by a node whose three timeouts are 300ms; the
// collections and the writes go through another node over the same store,
// with the defaults, so that a loaded machine cannot time the writes out.
func TestIdleStreamsOutliveTheTimeouts(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const idle = 4 * timeout
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := keepOpen{b.Open(t)}
		writer := startServer(t, store, node.DefaultConfig())
		withUsers(t, writer)
		writer.createColl(t, "db1", "msgs", messagesSchema)
		s := startServer(t, store, node.DefaultConfigWith(func(nc *node.Config) {
			nc.BodyTimeout = timeout
			nc.WriteTimeout = timeout
			nc.Ops.RequestTimeout = timeout
		}))

		h2c := func() *http.Transport {
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			return tr
		}
		type stream struct {
			name string
			ls   *liveStream
		}
		var events, msgs []stream
		for _, proto := range []string{"HTTP/1.1", "h2c"} {
			open := s.openStream
			if proto == "h2c" {
				open = func(t *testing.T, path, body string) *liveStream {
					res, cancel := s.startStreamOver(t, h2c(), path, body)
					if res.ProtoMajor != 2 {
						t.Fatalf("a stream over h2c came over HTTP/%d", res.ProtoMajor)
					}
					return readStream(t, res, cancel)
				}
			}
			events = append(events, stream{"events over " + proto, open(t, eventsPath("db1", "users"), `{}`)})
			msgs = append(msgs, stream{"subscription over " + proto, open(t, msgPath("db1", "msgs", "subscribe"), `{}`)})
		}
		for i := 1; i <= 2; i++ {
			// Idle past every timeout: before anything was sent on the
			// streams, then after a write on them.
			time.Sleep(idle)
			writer.insert(t, "db1", "users", fmt.Sprintf(`{"id":%d}`, i))
			for _, st := range events {
				if ev := st.ls.next(t); ev.Op != "insert" || string(ev.Data) != fmt.Sprintf(`{"id":%d}`, i) {
					t.Fatalf("after %v idle, the %s sent %s %s, want the insert of document %d", idle, st.name, ev.Op, ev.Data, i)
				}
			}
			writer.ok(t, "POST", msgPath("db1", "msgs", "publish"), fmt.Sprintf(`{"messages":[{"n":%d}]}`, i))
			for _, st := range msgs {
				if m := st.ls.message(t); string(m.Message) != fmt.Sprintf(`{"n":%d}`, i) {
					t.Fatalf("after %v idle, the %s sent %s, want message %d", idle, st.name, m.Message, i)
				}
			}
		}
	})
}
