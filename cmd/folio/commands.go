package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"

	"github.com/foliodb/folio/client"
)

// doc is a document as the commands handle it: the JSON the server sent,
// byte for byte (big integers and field order kept).
type doc = json.RawMessage

// commands are every command of folio, in the order `folio help` lists
// them (by section). They are set in init: completion derives its script
// from them, which the compiler would take for a cycle.
var commands []command

func init() {
	commands = append(append(serverCommands, adminCommands...), dataCommands...)
}

// serverCommands run, measure and keep a server and its store.
var serverCommands = []command{
	{name: "serve", summary: "Run the server. Every flag has an environment variable beside it, and a key of the --config file; --print-config shows the effective configuration and where each setting came from.", setup: serveCommand},
	{name: "bench", summary: "Load a server and measure it. Loads documents of about 1 KB into a collection, then runs workloads on it from concurrent clients, each for --duration, printing a progress line a second to stderr and a table (or JSON) of operations per second and p50/p95/p99 latency per operation to stdout.", details: benchWorkloads, setup: benchCommand},
	{name: "backup", summary: "Copy the store while it serves. Through a running server (--url), into a directory under its --backup-dir; or with --data-dir, from a data directory no server has open.", server: mayUseServer, tables: true, setup: backupCommand},
	{name: "restore", summary: "Put a backup into a new data directory. Then serve it: folio serve --data-dir D.", setup: restoreCommand},
	{name: "check", summary: "Verify every block of a stopped embedded store. The write-ahead log and manifest of --data-dir are replayed, every block's checksum and the keys' order checked; exits 1 if anything is damaged.", setup: checkCommand},
	{name: "version", summary: "Print the version, and the commit it was built from.", setup: noFlags(func(s *invocation, _ []string) error {
		_, err := fmt.Fprintln(s.out.w, buildInfo())
		return err
	})},
	{name: "completion", args: "bash|zsh|fish", summary: "Print a shell's completion script (bash, zsh, fish). Load it with source <(folio completion bash), or folio completion fish | source.", minArgs: 1, maxArgs: 1, setup: noFlags(completion)},
}

// adminCommands manage the applications, namespaces and signing keys of
// a server with authentication on (manage.go).
var adminCommands = []command{
	{name: "app create", summary: "Create an application, and print it with its secret (shown this once).", section: sectionAdmin, server: needsServer, tables: true, setup: appCreate},
	{name: "app list", summary: "List the applications.", section: sectionAdmin, server: needsServer, tables: true, setup: noFlags(appList)},
	{name: "app rotate", args: "ID", summary: "Give an application a new secret, and print it (shown this once).", section: sectionAdmin, minArgs: 1, maxArgs: 1, server: needsServer, tables: true, setup: noFlags(appRotate)},
	{name: "app delete", args: "ID", summary: "Delete an application.", section: sectionAdmin, minArgs: 1, maxArgs: 1, server: needsServer, tables: true, setup: noFlags(appDelete)},
	{name: "namespace create", args: "NAME", summary: "Create a namespace.", section: sectionAdmin, minArgs: 1, maxArgs: 1, server: needsServer, tables: true, setup: namespaceCreate},
	{name: "namespace list", summary: "List the namespaces.", section: sectionAdmin, server: needsServer, tables: true, setup: noFlags(namespaceList)},
	{name: "namespace delete", args: "NAME", summary: "Delete an empty namespace: no databases, no applications.", section: sectionAdmin, minArgs: 1, maxArgs: 1, server: needsServer, tables: true, setup: noFlags(namespaceDelete)},
	{name: "key rotate", summary: "Make a new key sign the server's tokens.", section: sectionAdmin, server: needsServer, tables: true, setup: noFlags(keyRotate)},
}

// dataCommands work on the databases, collections, documents, search,
// events and messages of a running server, through the client package.
var dataCommands = []command{
	{section: sectionData, server: needsServer, name: "status", summary: "Show which server the commands reach (--url or FOLIO_URL), its version, storage engine and whether it asks for credentials, and whether it and its storage are up; exits 3 when it cannot be reached, 1 when it is not healthy.", setup: noFlags(func(s *invocation, a []string) error {
		info, err := s.c.Info(s.ctx)
		if err != nil {
			return err
		}
		health := "ok"
		herr := s.c.Health(s.ctx)
		if herr != nil {
			health = herr.Error()
		}
		if err := s.out.value(map[string]any{"server": s.url, "version": info.ServerVersion, "engine": info.Engine, "auth": info.Auth, "health": health},
			"server", "version", "engine", "auth", "health"); err != nil {
			return err
		}
		return herr
	})},
	{section: sectionData, server: needsServer, name: "db create", args: "DB", summary: "Create a database.", minArgs: 1, maxArgs: 1, setup: noFlags(func(s *invocation, a []string) error {
		if _, err := s.c.CreateDatabase(s.ctx, a[0]); err != nil {
			return err
		}
		return s.out.message(map[string]any{"db": a[0], "status": "created"}, "database "+a[0]+" created")
	})},
	{section: sectionData, server: needsServer, name: "db drop", args: "DB", summary: "Drop a database and every collection in it.", minArgs: 1, maxArgs: 1, setup: noFlags(func(s *invocation, a []string) error {
		if err := s.c.Database(a[0]).Drop(s.ctx); err != nil {
			return err
		}
		return s.out.message(map[string]any{"db": a[0], "status": "dropped"}, "database "+a[0]+" dropped")
	})},
	{section: sectionData, server: needsServer, name: "db list", summary: "List the databases.", setup: noFlags(func(s *invocation, a []string) error {
		dbs, err := s.c.ListDatabases(s.ctx)
		if err != nil {
			return err
		}
		return printAll(s, dbs, "db")
	})},
	{section: sectionData, server: needsServer, name: "db describe", args: "DB", summary: "Describe a database: its collections and what they take.", minArgs: 1, maxArgs: 1, setup: noFlags(func(s *invocation, a []string) error {
		d, err := s.c.Database(a[0]).Describe(s.ctx)
		if err != nil {
			return err
		}
		if !s.out.table {
			return s.out.value(d)
		}
		type row struct {
			Collection string `json:"collection"`
			Documents  int64  `json:"document_bytes"`
			Indexes    int64  `json:"index_bytes"`
		}
		rows := make([]row, len(d.Collections))
		for i, c := range d.Collections {
			rows[i] = row{c.Name, c.Sizes.Documents, c.Sizes.Indexes}
		}
		return printAll(s, rows, "collection", "document_bytes", "index_bytes")
	})},

	{section: sectionData, server: needsServer, name: "collection create", args: "DB COLLECTION [SCHEMA]", summary: "Create a collection, or add fields to its schema. SCHEMA is the JSON schema, a file holding it, or - (the default) for standard input; without a \"title\" the collection's name is taken.", minArgs: 2, maxArgs: 3, setup: noFlags(func(s *invocation, a []string) error {
		schema, err := schemaArg(s, a[2:])
		if err != nil {
			return err
		}
		if err := s.c.Database(a[0]).CreateCollection(s.ctx, a[1], schema); err != nil {
			return err
		}
		return s.out.message(map[string]any{"db": a[0], "collection": a[1], "status": "created"}, "collection "+a[1]+" created")
	})},
	{section: sectionData, server: needsServer, name: "collection drop", args: "DB COLLECTION", summary: "Drop a collection and its documents.", minArgs: 2, maxArgs: 2, setup: noFlags(func(s *invocation, a []string) error {
		if err := s.c.Database(a[0]).DropCollection(s.ctx, a[1]); err != nil {
			return err
		}
		return s.out.message(map[string]any{"db": a[0], "collection": a[1], "status": "dropped"}, "collection "+a[1]+" dropped")
	})},
	{section: sectionData, server: needsServer, name: "collection list", args: "DB", summary: "List a database's collections.", minArgs: 1, maxArgs: 1, setup: noFlags(func(s *invocation, a []string) error {
		colls, err := s.c.Database(a[0]).ListCollections(s.ctx)
		if err != nil {
			return err
		}
		return printAll(s, colls, "collection")
	})},
	{section: sectionData, server: needsServer, name: "collection describe", args: "DB COLLECTION", summary: "Describe a collection: its schema (on a terminal, indented) and what it takes.", minArgs: 2, maxArgs: 2, setup: noFlags(func(s *invocation, a []string) error {
		d, err := s.c.Database(a[0]).DescribeCollection(s.ctx, a[1])
		if err != nil {
			return err
		}
		if !s.out.table {
			return s.out.value(d)
		}
		var b []byte
		if b, err = json.MarshalIndent(d.Schema, "", "  "); err != nil {
			return err
		}
		_, err = fmt.Fprintf(s.out.w, "%s\n", b)
		return err
	})},

	{section: sectionData, server: needsServer, name: "insert", args: "DB COLLECTION [DOCUMENT...]", summary: "Insert documents: JSON objects as arguments, in --file, or as JSON lines on standard input. Prints their keys.", minArgs: 2, maxArgs: -1, setup: writeCommand((*client.Collection[doc]).Insert)},
	{section: sectionData, server: needsServer, name: "replace", args: "DB COLLECTION [DOCUMENT...]", summary: "Insert documents or replace those with the same key; documents as for insert. Prints their keys.", minArgs: 2, maxArgs: -1, setup: writeCommand((*client.Collection[doc]).Replace)},
	{section: sectionData, server: needsServer, name: "read", args: "DB COLLECTION [FILTER]", summary: "Print the documents a filter selects (JSON, docs/api.md \"Filters\"; default {}, every document), in key order or --sort's.", minArgs: 2, maxArgs: 3, setup: readCommand},
	{section: sectionData, server: needsServer, name: "aggregate", args: "DB COLLECTION FIELDS [FILTER]", summary: "Group the documents a filter selects by --group-by's fields and print each group's FIELDS, such as {\"n\":{\"$count\":{}},\"total\":{\"$sum\":\"price\"}} (docs/api.md \"Aggregate\").", minArgs: 3, maxArgs: 4, setup: aggregateCommand},
	{section: sectionData, server: needsServer, name: "update", args: "DB COLLECTION FILTER UPDATE", summary: "Change the documents FILTER selects: UPDATE is {\"$set\":{…},\"$unset\":[…]}. Prints how many changed.", minArgs: 4, maxArgs: 4, setup: updateCommand},
	{section: sectionData, server: needsServer, name: "delete", args: "DB COLLECTION FILTER", summary: "Delete the documents FILTER selects ({} deletes every one). Prints how many.", minArgs: 3, maxArgs: 3, setup: deleteCommand},
	{section: sectionData, server: needsServer, name: "search", args: "DB COLLECTION [QUERY]", summary: "Full-text search: the documents holding every word and \"phrase\" of QUERY (default: all), with --filter, --facet and --sort.", minArgs: 2, maxArgs: 3, setup: searchCommand},
	{section: sectionData, server: needsServer, name: "events", args: "DB COLLECTION", summary: "Follow the changes of a collection until interrupted; --start-after resumes after an event's position.", minArgs: 2, maxArgs: 2, setup: eventsCommand},
	{section: sectionData, server: needsServer, name: "publish", args: "DB COLLECTION [MESSAGE...]", summary: "Publish messages to a messages collection; messages as insert's documents.", minArgs: 2, maxArgs: -1, setup: publishCommand},
	{section: sectionData, server: needsServer, name: "subscribe", args: "DB COLLECTION [FILTER]", summary: "Follow the messages published to a messages collection until interrupted; --start-after resumes after a message's position.", minArgs: 2, maxArgs: 3, setup: subscribeCommand},
	{section: sectionData, server: needsServer, name: "export", summary: "Write a database, or one collection of it, as JSON lines: one consistent state of it, which folio import reads back.", setup: exportCommand},
	{section: sectionData, server: needsServer, name: "import", args: "FILE|-", summary: "Import a file: an export of folio export, or documents (JSON lines or CSV) into --db and --collection, batched and resumable (docs/cli.md \"Importing\").", minArgs: 1, maxArgs: 1, setup: importCommand},
}

// noFlags is the setup of a command without flags of its own.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

// printAll prints values as records.
func printAll[T any](s *invocation, values []T, columns ...string) error {
	recs := make([]json.RawMessage, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		recs[i] = b
	}
	return s.out.records(recs, columns...)
}

func coll(s *invocation, args []string) *client.Collection[doc] {
	return client.Coll[doc](s.c.Database(args[0]), args[1])
}

// writeCommand is insert or replace: documents in batches, their keys
// printed as each batch is written.
func writeCommand(write func(*client.Collection[doc], context.Context, ...*doc) ([]client.Key, error)) func(*flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		file := fs.String("file", "", "read the documents from this file (JSON lines, or a JSON array); - for standard input")
		return func(s *invocation, a []string) error {
			c := coll(s, a)
			for batch, err := range documents(s, a[2:], *file) {
				if err != nil {
					return err
				}
				ptrs := make([]*doc, len(batch))
				for i := range batch {
					ptrs[i] = &batch[i]
				}
				keys, err := write(c, s.ctx, ptrs...)
				if err != nil {
					return err
				}
				if err := s.out.records(keys); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

func readCommand(fs *flag.FlagSet) runFunc {
	fields := fs.String("fields", "", "print only these fields (comma-separated)")
	sortBy := fs.String("sort", "", "order by these fields (comma-separated; -field for descending)")
	limit := fs.Int64("limit", 0, "print at most this many documents")
	skip := fs.Int64("skip", 0, "skip this many documents first")
	ci := fs.Bool("ci", false, "compare strings ignoring case")
	return func(s *invocation, a []string) error {
		filter, err := filterArg(a[2:])
		if err != nil {
			return err
		}
		opts := []client.Option{client.Limit(*limit), client.Skip(*skip)}
		if f := fieldList(*fields); f != nil {
			opts = append(opts, client.Fields(f...))
		}
		if srt := sortFields(*sortBy); srt != nil {
			opts = append(opts, client.Sort(srt...))
		}
		if *ci {
			opts = append(opts, client.CaseInsensitive())
		}
		var batch []json.RawMessage
		for d, err := range coll(s, a).Read(s.ctx, filter, opts...) {
			if err != nil {
				s.out.records(batch, fieldList(*fields)...)
				return err
			}
			batch = append(batch, d)
			if !s.out.table || len(batch) == tableBatch {
				if err := s.out.records(batch, fieldList(*fields)...); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		return s.out.records(batch, fieldList(*fields)...)
	}
}

// filterArg is an optional FILTER argument; none selects everything.
func filterArg(a []string) (client.Filter, error) {
	if len(a) == 0 {
		return client.All(), nil
	}
	f, err := jsonArg("filter", a[0])
	return client.RawFilter(f), err
}

func sortFields(s string) []client.SortField {
	var out []client.SortField
	for _, f := range sortList(s) {
		out = append(out, client.SortField{Field: f.name, Desc: f.desc})
	}
	return out
}

func aggregateCommand(fs *flag.FlagSet) runFunc {
	groupBy := fs.String("group-by", "", "group by these fields (comma-separated; default: one group)")
	sortBy := fs.String("sort", "", "order the groups by these group fields and results (comma-separated; -name for descending)")
	limit := fs.Int64("limit", 0, "print at most this many groups")
	ci := fs.Bool("ci", false, "the filter compares strings ignoring case")
	return func(s *invocation, a []string) error {
		fields, err := jsonArg("fields", a[2])
		if err != nil {
			return err
		}
		filter, err := filterArg(a[3:])
		if err != nil {
			return err
		}
		req := client.AggregateRequest{Filter: filter, GroupBy: fieldList(*groupBy), Fields: fields, Sort: sortFields(*sortBy), Limit: *limit, CaseInsensitive: *ci}
		// A table's columns: the group fields, then the results in FIELDS'
		// order.
		columns := append([]string(nil), req.GroupBy...)
		dec := json.NewDecoder(bytes.NewReader(fields))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					break
				}
				columns = append(columns, fmt.Sprint(name))
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
		}
		var recs []json.RawMessage
		for r, err := range coll(s, a).Aggregate(s.ctx, req) {
			if err != nil {
				s.out.records(recs, columns...)
				return err
			}
			var b []byte
			if s.out.table {
				row := map[string]any{}
				for k, v := range r.Group {
					row[k] = v
				}
				for k, v := range r.Values {
					row[k] = v
				}
				b, err = json.Marshal(row)
			} else {
				// The server's shape: the group, then the results.
				row := map[string]any{"group": r.Group}
				for k, v := range r.Values {
					row[k] = v
				}
				b, err = json.Marshal(row)
			}
			if err != nil {
				return err
			}
			recs = append(recs, b)
		}
		return s.out.records(recs, columns...)
	}
}

func updateCommand(fs *flag.FlagSet) runFunc {
	limit := fs.Int64("limit", 0, "change at most this many documents (the first in key order)")
	ci := fs.Bool("ci", false, "compare strings ignoring case")
	return func(s *invocation, a []string) error {
		filter, err := filterArg(a[2:3])
		if err != nil {
			return err
		}
		upd, err := jsonArg("update", a[3])
		if err != nil {
			return err
		}
		opts := []client.Option{client.Limit(*limit)}
		if *ci {
			opts = append(opts, client.CaseInsensitive())
		}
		n, err := coll(s, a).Update(s.ctx, filter, client.RawUpdate(upd), opts...)
		if err != nil {
			return err
		}
		return s.out.message(map[string]any{"modified_count": n}, fmt.Sprintf("%d updated", n))
	}
}

func deleteCommand(fs *flag.FlagSet) runFunc {
	limit := fs.Int64("limit", 0, "delete at most this many documents (the first in key order)")
	ci := fs.Bool("ci", false, "compare strings ignoring case")
	return func(s *invocation, a []string) error {
		filter, err := filterArg(a[2:3])
		if err != nil {
			return err
		}
		opts := []client.Option{client.Limit(*limit)}
		if *ci {
			opts = append(opts, client.CaseInsensitive())
		}
		n, err := coll(s, a).Delete(s.ctx, filter, opts...)
		if err != nil {
			return err
		}
		return s.out.message(map[string]any{"modified_count": n}, fmt.Sprintf("%d deleted", n))
	}
}

func searchCommand(fs *flag.FlagSet) runFunc {
	filter := fs.String("filter", "", "only documents this filter selects (JSON)")
	in := fs.String("in", "", "search the query in these string fields (comma-separated; default: all)")
	facets := fs.String("facet", "", "count the most frequent values of these fields (comma-separated)")
	sortBy := fs.String("sort", "", "order by these fields (comma-separated, -field for descending; default: relevance)")
	fields := fs.String("fields", "", "print only these fields (comma-separated)")
	page := fs.Int("page", 0, "print only this page (from 1); default: every page")
	pageSize := fs.Int("page-size", 0, "hits per page (default 20)")
	ci := fs.Bool("ci", false, "the filter compares strings ignoring case")
	return func(s *invocation, a []string) error {
		req := client.SearchRequest{SearchFields: fieldList(*in), Sort: sortFields(*sortBy), IncludeFields: fieldList(*fields),
			Page: *page, PageSize: *pageSize, CaseInsensitive: *ci}
		if len(a) > 2 {
			req.Q = a[2]
		}
		if *filter != "" {
			f, err := jsonArg("filter", *filter)
			if err != nil {
				return err
			}
			req.Filter = client.RawFilter(f)
		}
		if fl := fieldList(*facets); fl != nil {
			req.Facets = map[string]int{}
			for _, f := range fl {
				req.Facets[f] = 0
			}
		}
		var last *client.SearchPage[doc]
		for p, err := range coll(s, a).Search(s.ctx, req) {
			if err != nil {
				return err
			}
			last = p
			if !s.out.table {
				if err := s.out.value(p); err != nil {
					return err
				}
				continue
			}
			hits := make([]json.RawMessage, len(p.Hits))
			for i, h := range p.Hits {
				hits[i] = h.Data
			}
			if err := s.out.records(hits, fieldList(*fields)...); err != nil {
				return err
			}
		}
		if last == nil || !s.out.table {
			return nil
		}
		return printFacets(s, req, last)
	}
}

// printFacets prints a search's facets after its hits, for a person.
func printFacets(s *invocation, req client.SearchRequest, p *client.SearchPage[doc]) error {
	fmt.Fprintf(s.out.w, "\n%d found\n", p.Meta.Found)
	var rows []map[string]any
	for _, f := range slices.Sorted(maps.Keys(req.Facets)) {
		for _, c := range p.Facets[f].Counts {
			rows = append(rows, map[string]any{"facet": f, "value": c.Value, "count": c.Count})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(s.out.w)
	return printAll(s, rows, "facet", "value", "count")
}

func eventsCommand(fs *flag.FlagSet) runFunc {
	after := fs.String("start-after", "", "resume after the event at this position")
	where := fs.String("filter", "", "only the changes of the documents this filter (JSON) matches, before or after the change")
	ci := fs.Bool("ci", false, "the filter compares strings ignoring case")
	return func(s *invocation, a []string) error {
		opts := []client.Option{client.StartAfter(*after)}
		if *where != "" {
			filter, err := filterArg([]string{*where})
			if err != nil {
				return err
			}
			opts = append(opts, client.Matching(filter))
		}
		if *ci {
			opts = append(opts, client.CaseInsensitive())
		}
		for ev, err := range coll(s, a).Events(s.ctx, opts...) {
			if err != nil {
				return endOfFollow(s, err)
			}
			rec := eventRecord{Op: ev.Op, Collection: ev.Collection, Key: ev.Key, Data: ev.Data, TxID: ev.TxID, Last: ev.Last, LeftFilter: ev.LeftFilter, Expired: ev.Expired, Position: ev.Position}
			if rec.LeftFilter && s.out.table {
				rec.Op += " (left the filter)" // the table has no column for it
			}
			if rec.Expired && s.out.table {
				rec.Op += " (expired)"
			}
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := s.out.stream(b, "position", "op", "data"); err != nil {
				return err
			}
		}
		return nil
	}
}

// eventRecord is an event as `folio events --json` prints it: the API's
// event.
type eventRecord struct {
	Op         string `json:"op"`
	Collection string `json:"collection"`
	Key        []byte `json:"key"`
	Data       *doc   `json:"data,omitempty"`
	TxID       string `json:"tx_id"`
	Last       bool   `json:"last"`
	LeftFilter bool   `json:"left_filter,omitempty"`
	Expired    bool   `json:"expired,omitempty"`
	Position   string `json:"position"`
}

// endOfFollow is nil when a follow ended because it was asked to.
func endOfFollow(s *invocation, err error) error {
	if s.ctx.Err() != nil && errors.Is(err, s.ctx.Err()) {
		return nil
	}
	return err
}

func publishCommand(fs *flag.FlagSet) runFunc {
	file := fs.String("file", "", "read the messages from this file (JSON lines, or a JSON array); - for standard input")
	return func(s *invocation, a []string) error {
		c := coll(s, a)
		total := 0
		for batch, err := range documents(s, a[2:], *file) {
			if err != nil {
				return err
			}
			if _, err := c.Publish(s.ctx, batch...); err != nil {
				return err
			}
			total += len(batch)
		}
		return s.out.message(map[string]any{"published": total}, fmt.Sprintf("%d published", total))
	}
}

func subscribeCommand(fs *flag.FlagSet) runFunc {
	after := fs.String("start-after", "", "resume after the message at this position")
	ci := fs.Bool("ci", false, "the filter compares strings ignoring case")
	return func(s *invocation, a []string) error {
		filter, err := filterArg(a[2:])
		if err != nil {
			return err
		}
		opts := []client.Option{client.StartAfter(*after)}
		if *ci {
			opts = append(opts, client.CaseInsensitive())
		}
		for m, err := range coll(s, a).Subscribe(s.ctx, filter, opts...) {
			if err != nil {
				return endOfFollow(s, err)
			}
			b, err := json.Marshal(map[string]any{"message": m.Data, "position": m.Position})
			if err != nil {
				return err
			}
			if err := s.out.stream(b, "position", "message"); err != nil {
				return err
			}
		}
		return nil
	}
}
