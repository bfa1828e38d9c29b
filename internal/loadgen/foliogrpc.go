package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// FolioGRPCDriver runs workloads over the Tigris v1 gRPC API that Folio
// serves on its HTTP port, as the official clients call it by default: the
// generated stubs, documents as JSON bytes in protobuf messages, a read as
// a server stream, a transaction named by metadata on each of its calls.
//
// Every client shares one connection per server, as the official Go client
// keeps one grpc.ClientConn for all its calls: HTTP/2 multiplexes them, so
// a connection per client would measure a setup no application has.
type FolioGRPCDriver struct {
	name       string
	db, coll   string
	clients    []api.TigrisClient // one per server; calls go to each in turn
	conns      []*grpc.ClientConn
	next       atomic.Uint64
	readLimits [ScanLength + 1]*api.ReadRequestOptions // shared, never changed
}

// NewFolioGRPC returns a gRPC driver for the server at opts.URL: its base
// URL (http://host:port, the port serving both HTTP and gRPC) or host:port,
// or several comma-separated, nodes on one PostgreSQL database. HTTPClient
// is not used.
func NewFolioGRPC(opts FolioOptions) (*FolioGRPCDriver, error) {
	if opts.Database == "" {
		opts.Database = "bench"
	}
	if opts.Collection == "" {
		opts.Collection = "usertable"
	}
	if opts.Name == "" {
		opts.Name = "folio-grpc"
	}
	d := &FolioGRPCDriver{name: opts.Name, db: opts.Database, coll: opts.Collection}
	for _, u := range strings.Split(opts.URL, ",") {
		addr := strings.TrimRight(strings.TrimSpace(u), "/")
		if strings.HasPrefix(addr, "https://") {
			d.Close()
			return nil, fmt.Errorf("gRPC driver: %s: TLS is not supported, only plain (h2c) gRPC", addr)
		}
		addr = strings.TrimPrefix(addr, "http://")
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("gRPC driver: %s: %w", addr, err)
		}
		d.conns = append(d.conns, conn)
		d.clients = append(d.clients, api.NewTigrisClient(conn))
	}
	for i := range d.readLimits {
		d.readLimits[i] = &api.ReadRequestOptions{Limit: int64(i)}
	}
	return d, nil
}

// Name implements Driver.
func (d *FolioGRPCDriver) Name() string { return d.name }

// Close implements Driver.
func (d *FolioGRPCDriver) Close() error {
	var errs []error
	for _, c := range d.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// client is the stub of the next server in turn.
func (d *FolioGRPCDriver) client() api.TigrisClient {
	if len(d.clients) == 1 {
		return d.clients[0]
	}
	return d.clients[d.next.Add(1)%uint64(len(d.clients))]
}

// grpcError is err with what failed named; an ABORTED answer wraps
// ErrAborted too.
func grpcError(what string, err error) error {
	if grpcstatus.Code(err) == codes.Aborted {
		return fmt.Errorf("%s: %w: %w", what, ErrAborted, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// apiCode is the API's code of a gRPC error: the name its ErrorInfo
// carries (the codes gRPC lacks, such as CONFLICT, travel only there), or
// else the gRPC code's.
func apiCode(err error) string {
	st := grpcstatus.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason != "" {
			return info.Reason
		}
	}
	return st.Code().String()
}

// grpcTx is the metadata that puts a call in an interactive transaction,
// as the official clients send it.
type grpcTx struct{ md metadata.MD }

func (t *grpcTx) context(ctx context.Context) context.Context {
	if t == nil {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, t.md)
}

// read streams a read and hands each document to each (nil: count them
// only); it returns how many came.
func (d *FolioGRPCDriver) read(ctx context.Context, req *api.ReadRequest, tx *grpcTx, each func([]byte) error) (int, error) {
	req.Project, req.Collection = d.db, d.coll
	ctx, cancel := context.WithCancel(tx.context(ctx))
	defer cancel() // ends the stream if it is left before its end
	stream, err := d.client().Read(ctx, req)
	if err != nil {
		return 0, grpcError("read", err)
	}
	n := 0
	for {
		res, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, grpcError("read", err)
		}
		n++
		if each != nil {
			if err := each(res.GetData()); err != nil {
				return n, err
			}
		}
	}
}

// keyFilter is the filter {"id":id}.
func keyFilter(id int64) []byte {
	b := make([]byte, 0, 32)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, '}')
}

func (d *FolioGRPCDriver) readOne(ctx context.Context, id int64, branch string, tx *grpcTx) error {
	n, err := d.read(ctx, &api.ReadRequest{Filter: keyFilter(id), Branch: branch}, tx, nil)
	if err == nil && n != 1 {
		err = fmt.Errorf("read document %d: %d documents, want 1", id, n)
	}
	return err
}

// limit is the options of a read limited to n documents.
func (d *FolioGRPCDriver) limit(n int) *api.ReadRequestOptions {
	if n >= 0 && n < len(d.readLimits) {
		return d.readLimits[n]
	}
	return &api.ReadRequestOptions{Limit: int64(n)}
}

// Read implements Driver.
func (d *FolioGRPCDriver) Read(ctx context.Context, id int64) error {
	return d.readOne(ctx, id, "", nil)
}

// Read2023 implements Driver: the final clients name a branch (main unless
// told otherwise) in every call, which makes it a 2023 call.
func (d *FolioGRPCDriver) Read2023(ctx context.Context, id int64) error {
	return d.readOne(ctx, id, "main", nil)
}

func (d *FolioGRPCDriver) update(ctx context.Context, id int64, field, value string, tx *grpcTx) error {
	b := make([]byte, 0, 24+len(field)+len(value))
	b = append(b, `{"$set":{`...)
	b = strconv.AppendQuote(b, field)
	b = append(b, ':')
	b = strconv.AppendQuote(b, value) // field values are ASCII letters: Go and JSON quote them alike
	b = append(b, "}}"...)
	res, err := d.client().Update(tx.context(ctx), &api.UpdateRequest{Project: d.db, Collection: d.coll,
		Filter: keyFilter(id), Fields: b})
	if err != nil {
		return grpcError(fmt.Sprintf("update document %d", id), err)
	}
	if res.GetModifiedCount() != 1 {
		return fmt.Errorf("update document %d: modified %d documents, want 1", id, res.GetModifiedCount())
	}
	return nil
}

// Update implements Driver.
func (d *FolioGRPCDriver) Update(ctx context.Context, id int64, field, value string) error {
	return d.update(ctx, id, field, value, nil)
}

// Insert implements Driver.
func (d *FolioGRPCDriver) Insert(ctx context.Context, doc Document) error {
	return d.InsertBatch(ctx, []Document{doc})
}

// InsertBatch implements Driver. The documents' bytes are sent as they
// are: the call has encoded them by the time it returns.
func (d *FolioGRPCDriver) InsertBatch(ctx context.Context, docs []Document) error {
	list := make([][]byte, len(docs))
	for i, doc := range docs {
		list[i] = doc.JSON
	}
	res, err := d.client().Insert(ctx, &api.InsertRequest{Project: d.db, Collection: d.coll, Documents: list})
	if err != nil {
		return grpcError("insert", err)
	}
	if len(res.GetKeys()) != len(docs) {
		return fmt.Errorf("insert of %d documents answered %d keys", len(docs), len(res.GetKeys()))
	}
	return nil
}

func scoreRange(lo, hi int64) []byte {
	b := append([]byte(`{"score":{"$gte":`), strconv.FormatInt(lo, 10)...)
	b = append(b, `,"$lt":`...)
	b = strconv.AppendInt(b, hi, 10)
	return append(b, "}}"...)
}

// Scan implements Driver.
func (d *FolioGRPCDriver) Scan(ctx context.Context, id int64, limit int) (int, error) {
	f := append([]byte(`{"id":{"$gte":`), strconv.FormatInt(id, 10)...)
	n, err := d.read(ctx, &api.ReadRequest{Filter: append(f, "}}"...), Options: d.limit(limit)}, nil, nil)
	if err == nil && n > limit {
		err = fmt.Errorf("scan of %d from %d: %d documents", limit, id, n)
	}
	return n, err
}

// FindEqual implements Driver.
func (d *FolioGRPCDriver) FindEqual(ctx context.Context, email string) (int, error) {
	f := append([]byte(`{"email":`), strconv.Quote(email)...)
	return d.read(ctx, &api.ReadRequest{Filter: append(f, '}')}, nil, nil)
}

// FindRange implements Driver.
func (d *FolioGRPCDriver) FindRange(ctx context.Context, lo, hi int64) (int, error) {
	return d.read(ctx, &api.ReadRequest{Filter: scoreRange(lo, hi)}, nil, nil)
}

// FindGroup implements Driver.
func (d *FolioGRPCDriver) FindGroup(ctx context.Context, group string, limit int) (int, error) {
	f := append([]byte(`{"group":`), strconv.Quote(group)...)
	return d.read(ctx, &api.ReadRequest{Filter: append(f, '}'), Options: d.limit(limit)}, nil, nil)
}

// FindRangeLimit implements Driver.
func (d *FolioGRPCDriver) FindRangeLimit(ctx context.Context, lo, hi int64, limit int) (int, error) {
	return d.read(ctx, &api.ReadRequest{Filter: scoreRange(lo, hi), Options: d.limit(limit)}, nil, nil)
}

// CountRange implements Driver, with the 2023 API's Count.
func (d *FolioGRPCDriver) CountRange(ctx context.Context, lo, hi int64) (int64, error) {
	res, err := d.client().Count(ctx, &api.CountRequest{Project: d.db, Collection: d.coll, Filter: scoreRange(lo, hi)})
	if err != nil {
		return 0, grpcError("count", err)
	}
	return res.GetCount(), nil
}

// Setup implements Driver: it drops the collection (not the database) and
// creates it again, each step retried while aborted, as FolioDriver's.
func (d *FolioGRPCDriver) Setup(ctx context.Context) error {
	c := d.client()
	err := d.retryAborted(ctx, func() error {
		_, err := c.DropCollection(ctx, &api.DropCollectionRequest{Project: d.db, Collection: d.coll})
		return err
	})
	if err != nil && apiCode(err) != "NOT_FOUND" {
		return fmt.Errorf("drop collection %s: %w", d.coll, err)
	}
	err = d.retryAborted(ctx, func() error {
		_, err := c.CreateDatabase(ctx, &api.CreateDatabaseRequest{Db: d.db})
		return err
	})
	if err != nil && apiCode(err) != "ALREADY_EXISTS" && apiCode(err) != "CONFLICT" {
		return fmt.Errorf("create database: %w", err)
	}
	err = d.retryAborted(ctx, func() error {
		_, err := c.CreateOrUpdateCollection(ctx, &api.CreateOrUpdateCollectionRequest{Project: d.db, Collection: d.coll, Schema: schemaObject(d.coll)})
		return err
	})
	if err != nil {
		return fmt.Errorf("create collection %s: %w", d.coll, err)
	}
	return nil
}

// retryAborted makes a call, again while it is aborted (see
// retryWhileAborted).
func (d *FolioGRPCDriver) retryAborted(ctx context.Context, call func() error) error {
	return retryWhileAborted(ctx, call, func(err error) bool { return grpcstatus.Code(err) == codes.Aborted })
}

// FinishLoad implements Driver; Folio needs nothing once the data is in.
func (d *FolioGRPCDriver) FinishLoad(ctx context.Context) error { return nil }

// Trim implements Driver. It finds the largest id, then deletes from
// upwards in chunks.
func (d *FolioGRPCDriver) Trim(ctx context.Context, from int64) error {
	last := int64(-1)
	_, err := d.read(ctx, &api.ReadRequest{Filter: fmt.Appendf(nil, `{"id":{"$gte":%d}}`, from), Fields: []byte(`{"id":1}`)}, nil,
		func(doc []byte) error {
			// The ids come in key order: the last one read is the largest.
			var key struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal(doc, &key); err != nil {
				return fmt.Errorf("the id of %.200s: %w", doc, err)
			}
			last = key.ID
			return nil
		})
	if err != nil {
		return fmt.Errorf("find documents to trim: %w", err)
	}
	for lo := from; lo <= last; lo += trimChunk {
		_, err := d.client().Delete(ctx, &api.DeleteRequest{Project: d.db, Collection: d.coll,
			Filter: fmt.Appendf(nil, `{"id":{"$gte":%d,"$lt":%d}}`, lo, lo+trimChunk)})
		if err != nil {
			return fmt.Errorf("delete documents %d to %d: %w", lo, lo+trimChunk-1, err)
		}
	}
	return nil
}

// Begin implements Driver.
func (d *FolioGRPCDriver) Begin(ctx context.Context) (Tx, error) {
	res, err := d.client().BeginTransaction(ctx, &api.BeginTransactionRequest{Project: d.db})
	if err != nil {
		return nil, grpcError("begin", err)
	}
	tc := res.GetTxCtx()
	return &folioGRPCTx{d: d, tx: grpcTx{md: metadata.Pairs("tigris-tx-id", tc.GetId(), "tigris-tx-origin", tc.GetOrigin())}}, nil
}

type folioGRPCTx struct {
	d  *FolioGRPCDriver
	tx grpcTx
}

func (t *folioGRPCTx) Read(ctx context.Context, id int64) error {
	return t.d.readOne(ctx, id, "", &t.tx)
}

func (t *folioGRPCTx) Update(ctx context.Context, id int64, field, value string) error {
	return t.d.update(ctx, id, field, value, &t.tx)
}

func (t *folioGRPCTx) Commit(ctx context.Context) error {
	if _, err := t.d.client().CommitTransaction(t.tx.context(ctx), &api.CommitTransactionRequest{Project: t.d.db}); err != nil {
		return grpcError("commit", err)
	}
	return nil
}

func (t *folioGRPCTx) Rollback(ctx context.Context) error {
	_, err := t.d.client().RollbackTransaction(t.tx.context(ctx), &api.RollbackTransactionRequest{Project: t.d.db})
	return err
}
