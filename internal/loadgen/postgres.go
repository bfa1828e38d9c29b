package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresDriver runs workloads on PostgreSQL as a competent user would
// store documents there: a table per collection, (id bigint primary key,
// doc jsonb), an expression index for each non-key field that is queried
// (email and group for equalities, score as bigint for ranges), prepared statements
// over a pool with a connection per client, and SERIALIZABLE for the
// interactive transactions, the isolation Folio gives them. Every other
// statement runs alone under the server's defaults; durability is the
// server's (fsync and synchronous_commit on, unless it was started
// otherwise).
type PostgresDriver struct {
	pool      *pgxpool.Pool
	tableName string
	table     string // quoted for SQL

	read, update, insert, scan, findEq, findRange, findGroup, findRangeLimit, countRange string
}

// NewPostgres connects to the database at dsn (a libpq URL or key=value
// string); the documents live in table (default usertable).
func NewPostgres(ctx context.Context, dsn, table string, clients int) (*PostgresDriver, error) {
	if table == "" {
		table = "usertable"
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.MaxConns = int32(max(clients, 1) + 2)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	t := pgx.Identifier{table}.Sanitize()
	return &PostgresDriver{
		pool:      pool,
		tableName: table,
		table:     t,
		read:      "SELECT doc FROM " + t + " WHERE id = $1",
		update:    "UPDATE " + t + " SET doc = jsonb_set(doc, $2, to_jsonb($3::text)) WHERE id = $1",
		insert:    "INSERT INTO " + t + " (id, doc) VALUES ($1, $2)",
		scan:      "SELECT id, doc FROM " + t + " WHERE id >= $1 ORDER BY id LIMIT $2",
		findEq:    "SELECT doc FROM " + t + " WHERE doc->>'email' = $1",
		// The casts match the index expression, so the planner uses it.
		findRange:      "SELECT doc FROM " + t + " WHERE (doc->>'score')::bigint >= $1 AND (doc->>'score')::bigint < $2",
		findGroup:      "SELECT doc FROM " + t + " WHERE doc->>'group' = $1 LIMIT $2",
		findRangeLimit: "SELECT doc FROM " + t + " WHERE (doc->>'score')::bigint >= $1 AND (doc->>'score')::bigint < $2 LIMIT $3",
		countRange:     "SELECT count(*) FROM " + t + " WHERE (doc->>'score')::bigint >= $1 AND (doc->>'score')::bigint < $2",
	}, nil
}

// Name implements Driver.
func (d *PostgresDriver) Name() string { return "postgres" }

// Close implements Driver.
func (d *PostgresDriver) Close() error {
	d.pool.Close()
	return nil
}

// querier is what the pool and a transaction share.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// count runs a query and counts its rows. The documents arrive whole but
// are not decoded, as the Folio driver counts lines without parsing them.
func count(ctx context.Context, q querier, sql string, args ...any) (int, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return 0, abortedIfConflict(err)
	}
	n := 0
	for rows.Next() {
		rows.RawValues()
		n++
	}
	return n, abortedIfConflict(rows.Err())
}

// abortedIfConflict wraps ErrAborted around serialization failures and
// deadlocks, PostgreSQL's ways of refusing a transaction for a conflict.
func abortedIfConflict(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01") {
		return fmt.Errorf("%w: %w", ErrAborted, err)
	}
	return err
}

func (d *PostgresDriver) readOne(ctx context.Context, q querier, id int64) error {
	n, err := count(ctx, q, d.read, id)
	if err == nil && n != 1 {
		err = fmt.Errorf("read document %d: %d rows, want 1", id, n)
	}
	return err
}

func (d *PostgresDriver) updateOne(ctx context.Context, q querier, id int64, field, value string) error {
	tag, err := q.Exec(ctx, d.update, id, []string{field}, value)
	if err != nil {
		return abortedIfConflict(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("update document %d: %d rows, want 1", id, tag.RowsAffected())
	}
	return nil
}

// Read implements Driver.
func (d *PostgresDriver) Read(ctx context.Context, id int64) error { return d.readOne(ctx, d.pool, id) }

// Update implements Driver.
func (d *PostgresDriver) Update(ctx context.Context, id int64, field, value string) error {
	return d.updateOne(ctx, d.pool, id, field, value)
}

// Insert implements Driver.
func (d *PostgresDriver) Insert(ctx context.Context, doc Document) error {
	_, err := d.pool.Exec(ctx, d.insert, doc.ID, json.RawMessage(doc.JSON))
	return err
}

// InsertBatch implements Driver with COPY, the fast way in.
func (d *PostgresDriver) InsertBatch(ctx context.Context, docs []Document) error {
	rows := make([][]any, len(docs))
	for i, doc := range docs {
		rows[i] = []any{doc.ID, json.RawMessage(doc.JSON)}
	}
	_, err := d.pool.CopyFrom(ctx, pgx.Identifier{d.tableName}, []string{"id", "doc"}, pgx.CopyFromRows(rows))
	return err
}

// Scan implements Driver.
func (d *PostgresDriver) Scan(ctx context.Context, id int64, limit int) (int, error) {
	return count(ctx, d.pool, d.scan, id, limit)
}

// FindEqual implements Driver.
func (d *PostgresDriver) FindEqual(ctx context.Context, email string) (int, error) {
	return count(ctx, d.pool, d.findEq, email)
}

// FindRange implements Driver.
func (d *PostgresDriver) FindRange(ctx context.Context, lo, hi int64) (int, error) {
	return count(ctx, d.pool, d.findRange, lo, hi)
}

// FindGroup implements Driver.
func (d *PostgresDriver) FindGroup(ctx context.Context, group string, limit int) (int, error) {
	return count(ctx, d.pool, d.findGroup, group, limit)
}

// FindRangeLimit implements Driver.
func (d *PostgresDriver) FindRangeLimit(ctx context.Context, lo, hi int64, limit int) (int, error) {
	return count(ctx, d.pool, d.findRangeLimit, lo, hi, limit)
}

// CountRange implements Driver.
func (d *PostgresDriver) CountRange(ctx context.Context, lo, hi int64) (int64, error) {
	var n int64
	err := d.pool.QueryRow(ctx, d.countRange, lo, hi).Scan(&n)
	return n, err
}

// Read2023 implements Driver: PostgreSQL has one way to read.
func (d *PostgresDriver) Read2023(ctx context.Context, id int64) error { return d.Read(ctx, id) }

// Setup implements Driver.
func (d *PostgresDriver) Setup(ctx context.Context) error {
	for _, sql := range []string{
		"DROP TABLE IF EXISTS " + d.table,
		"CREATE TABLE " + d.table + " (id bigint PRIMARY KEY, doc jsonb NOT NULL)",
	} {
		if _, err := d.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// FinishLoad implements Driver: the indexes for the non-key queries, built
// once the data is in as a user would, then VACUUM ANALYZE for the planner's
// statistics and the visibility map.
func (d *PostgresDriver) FinishLoad(ctx context.Context) error {
	for _, sql := range []string{
		"CREATE INDEX ON " + d.table + " ((doc->>'email'))",
		"CREATE INDEX ON " + d.table + " ((doc->>'group'))",
		"CREATE INDEX ON " + d.table + " (((doc->>'score')::bigint))",
		"VACUUM ANALYZE " + d.table,
	} {
		if _, err := d.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// Trim implements Driver.
// A trim that deleted rows vacuums the table, so that it is left as the
// load left it rather than to an autovacuum that may come during a later
// run (Folio's store likewise compacts after its deletes).
func (d *PostgresDriver) Trim(ctx context.Context, from int64) error {
	tag, err := d.pool.Exec(ctx, "DELETE FROM "+d.table+" WHERE id >= $1", from)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	_, err = d.pool.Exec(ctx, "VACUUM "+d.table)
	return err
}

// Begin implements Driver.
func (d *PostgresDriver) Begin(ctx context.Context) (Tx, error) {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &pgTx{d: d, tx: tx}, nil
}

type pgTx struct {
	d  *PostgresDriver
	tx pgx.Tx
}

func (t *pgTx) Read(ctx context.Context, id int64) error { return t.d.readOne(ctx, t.tx, id) }

func (t *pgTx) Update(ctx context.Context, id int64, field, value string) error {
	return t.d.updateOne(ctx, t.tx, id, field, value)
}

func (t *pgTx) Commit(ctx context.Context) error {
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", abortedIfConflict(err))
	}
	return nil
}

func (t *pgTx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }
