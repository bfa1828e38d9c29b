package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// schemaVersion is the version of the tables and functions below. A store
// that finds an older version in the database (re)creates what is missing;
// CREATE ... IF NOT EXISTS and CREATE OR REPLACE keep that idempotent.
const schemaVersion = 4

// schemaLockKey is the advisory lock that serializes schema creation, so that
// nodes starting together do not race on the catalogs ("tuple concurrently
// updated", duplicate type names).
const schemaLockKey = 0x466f6c696f0001 // "Folio" 0001

// maintenanceLockKey is held (per transaction) by the node folding counter
// deltas or collecting tombstones, so that nodes take turns.
const maintenanceLockKey = 0x466f6c696f0002

// notifyChannel carries the announcements of commits (announce.go): the
// newest position committed, followed by " a" when a commit announced added
// to counters.
const notifyChannel = "folio_commit"

// schemaSQL creates everything the backend needs. The tables:
//
//   - folio_kv: the ordered key space. wx is the transaction id of the row's
//     newest write, which validation compares with a reader's snapshot; sx
//     that of the newest Set or Clear, which retires older counter deltas.
//     v IS NULL marks a tombstone, kept until no transaction that can still
//     commit may have read the key before it was cleared.
//   - folio_delta: counter additions not yet folded into folio_kv. A key's
//     value is its folio_kv value (zero if none) plus its deltas newer than
//     its sx; older deltas were overwritten by a Set or Clear.
//   - folio_counter: every key that may have deltas (each Add inserts its
//     key if missing). Validation looks for deltas only under these keys,
//     so that a transaction that read no counter never reads folio_delta:
//     that small table sits in one or two pages, and SSI's page-level
//     predicate locks made every such read conflict with every concurrent
//     Add (17% of the interactive transactions aborted on uniform keys).
//   - folio_log: one row per committed writing transaction, keyed by its
//     position (its 64-bit transaction id); rec holds the change-log entry,
//     NULL when the transaction appended none.
//   - folio_meta: one row: schema version and the log trim points.
var schemaSQL = `
CREATE TABLE IF NOT EXISTS folio_kv (
	k  bytea PRIMARY KEY,
	v  bytea,
	wx xid8 NOT NULL,
	sx xid8 NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_kv_tombstones ON folio_kv (wx) WHERE v IS NULL;

CREATE TABLE IF NOT EXISTS folio_delta (
	k  bytea NOT NULL,
	wx xid8 NOT NULL,
	d  bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS folio_delta_k ON folio_delta (k);

CREATE TABLE IF NOT EXISTS folio_counter (
	k bytea PRIMARY KEY
);
-- Stores of version 2 had no folio_counter: every key with deltas is one.
-- The share lock waits for adds in flight. A version-2 node's commit that
-- was waiting for the lock still runs the old function body once it ends,
-- adding a delta whose key (if new) is not listed: until the maintainer
-- folds that delta (FoldDelay), which gives the key's row a new wx that
-- validation sees, a reader of that key may miss it. That window exists
-- only during the upgrade, and only for a counter key new at that moment.
LOCK TABLE folio_delta IN SHARE MODE;
INSERT INTO folio_counter (k) SELECT DISTINCT k FROM folio_delta ON CONFLICT (k) DO NOTHING;

CREATE TABLE IF NOT EXISTS folio_log (
	x   xid8 PRIMARY KEY,
	rec bytea
);

CREATE TABLE IF NOT EXISTS folio_meta (
	id             int PRIMARY KEY CHECK (id = 1),
	schema_version int NOT NULL,
	trimmed_entry  xid8 NOT NULL DEFAULT '0', -- the newest log entry TrimLog removed
	trimmed_commit xid8 NOT NULL DEFAULT '0'  -- the newest commit row TrimLog removed
);
INSERT INTO folio_meta (id, schema_version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

-- folio_apply validates and applies one transaction, in the caller's
-- SERIALIZABLE transaction, and returns its position.
--
-- snap is the snapshot the transaction read from (NULL if it read nothing
-- from the database: then the commit's own snapshot). A key in one of its read
-- ranges [rb[i], re[i]) whose newest write (or a counter delta) is not
-- visible in that snapshot was written after the transaction read: the
-- commit fails with serialization_failure. Deltas are looked for only under
-- the keys of folio_counter in the range. Writes committed concurrently
-- with this validation are PostgreSQL's SSI's business, which sees the
-- validation's reads.
--
-- Cleared ranges apply first, then single-key sets, clears and adds. Sets
-- and clears stamp sx, which retires the key's older deltas without reading
-- them: a read that touched folio_delta would make concurrent adders
-- conflict through SSI's page-level predicate locks.
CREATE OR REPLACE FUNCTION folio_apply(
	snap text,
	rb bytea[], re bytea[],
	cb bytea[], ce bytea[],
	sk bytea[], sv bytea[],
	dk bytea[],
	ak bytea[], ad bigint[],
	rec bytea
) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
	x xid8 := pg_current_xact_id();
	s pg_snapshot := coalesce(snap::pg_snapshot, pg_current_snapshot());
BEGIN
	IF cardinality(rb) > 0 AND EXISTS (
		SELECT 1 FROM unnest(rb, re) AS r(b, e)
		WHERE EXISTS (SELECT 1 FROM folio_kv WHERE k >= r.b AND k < r.e AND NOT pg_visible_in_snapshot(wx, s))
		   OR EXISTS (SELECT 1 FROM folio_counter AS c WHERE c.k >= r.b AND c.k < r.e
				AND EXISTS (SELECT 1 FROM folio_delta AS d WHERE d.k = c.k AND NOT pg_visible_in_snapshot(d.wx, s)))
	) THEN
		RAISE EXCEPTION 'folio: a key range the transaction read was written after its read snapshot'
			USING ERRCODE = 'serialization_failure';
	END IF;

	IF cardinality(cb) > 0 THEN
		UPDATE folio_kv SET v = NULL, wx = x, sx = x
			FROM unnest(cb, ce) AS c(b, e) WHERE k >= c.b AND k < c.e AND v IS NOT NULL;
		-- Keys that are only deltas need a tombstone to retire them.
		INSERT INTO folio_kv (k, v, wx, sx)
			SELECT DISTINCT d.k, NULL::bytea, x, x FROM folio_delta d, unnest(cb, ce) AS c(b, e) WHERE d.k >= c.b AND d.k < c.e
			ON CONFLICT (k) DO UPDATE SET v = NULL, wx = EXCLUDED.wx, sx = EXCLUDED.sx;
		DELETE FROM folio_delta d USING unnest(cb, ce) AS c(b, e) WHERE d.k >= c.b AND d.k < c.e;
	END IF;

	IF cardinality(sk) > 0 THEN
		INSERT INTO folio_kv (k, v, wx, sx) SELECT u.k, u.v, x, x FROM unnest(sk, sv) AS u(k, v)
			ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, wx = EXCLUDED.wx, sx = EXCLUDED.sx;
	END IF;

	IF cardinality(dk) > 0 THEN
		INSERT INTO folio_kv (k, v, wx, sx) SELECT u.k, NULL::bytea, x, x FROM unnest(dk) AS u(k)
			ON CONFLICT (k) DO UPDATE SET v = NULL, wx = EXCLUDED.wx, sx = EXCLUDED.sx;
	END IF;

	IF cardinality(ak) > 0 THEN
		-- Reading folio_counter first (rather than ON CONFLICT alone) is what
		-- makes SSI order this add against the maintainer removing the key
		-- (collectCounters), which reads folio_delta.
		INSERT INTO folio_counter (k) SELECT DISTINCT u.k FROM unnest(ak) AS u(k)
			WHERE NOT EXISTS (SELECT 1 FROM folio_counter AS c WHERE c.k = u.k)
			ON CONFLICT (k) DO NOTHING;
		INSERT INTO folio_delta (k, wx, d) SELECT u.k, x, u.d FROM unnest(ak, ad) AS u(k, d);
	END IF;

	INSERT INTO folio_log (x, rec) VALUES (x, rec);
	RETURN x::text;
END
$fn$;

-- folio_commit is folio_apply with the commit's notification sent inside
-- it, as nodes of schema version 3 and older call it. Newer nodes announce
-- their commits after the fact (announce.go): a NOTIFY in a transaction
-- makes its commit take a database-wide lock until the commit ends.
CREATE OR REPLACE FUNCTION folio_commit(
	snap text,
	rb bytea[], re bytea[],
	cb bytea[], ce bytea[],
	sk bytea[], sv bytea[],
	dk bytea[],
	ak bytea[], ad bigint[],
	rec bytea
) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
	x text := folio_apply(snap, rb, re, cb, ce, sk, sv, dk, ak, ad, rec);
BEGIN
	PERFORM pg_notify('` + notifyChannel + `', x || CASE WHEN cardinality(ak) > 0 THEN ' a' ELSE '' END);
	RETURN x;
END
$fn$;

UPDATE folio_meta SET schema_version = ` + strconv.Itoa(schemaVersion) + `;
`

// ensureSchema creates the tables and functions unless the database already
// has the current version. Checking first means that a role without CREATE
// privileges can run once someone privileged created the schema.
func ensureSchema(ctx context.Context, conn *pgx.Conn) error {
	var version int
	err := conn.QueryRow(ctx, "SELECT schema_version FROM folio_meta").Scan(&version)
	if err == nil && version >= schemaVersion {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		if perr := checkPrivileges(ctx, conn); perr != nil {
			return perr // the list of what is missing says more
		}
	}
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P01") { // undefined_table is expected on a new database
		return fmt.Errorf("read schema version: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLockKey)); err != nil {
		return fmt.Errorf("lock for schema creation: %w", err)
	}
	if _, err := tx.Exec(ctx, schemaSQL); err != nil {
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return fmt.Errorf("create the folio tables: %w (the role needs CREATE on the schema the first time; "+
				"or have a privileged role open the store once)", err)
		}
		return fmt.Errorf("create the folio tables: %w", err)
	}
	return tx.Commit(ctx)
}

// checkPrivileges fails with a list of what the role lacks, so that a
// misconfigured deployment fails at start rather than at its first write.
func checkPrivileges(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `
		SELECT t || ': ' || p FROM unnest(ARRAY['folio_kv', 'folio_delta', 'folio_counter', 'folio_log', 'folio_meta']) AS t,
			unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) AS p
		WHERE NOT has_table_privilege(t, p)
		UNION ALL
		SELECT f || ': EXECUTE' FROM unnest(ARRAY['folio_apply', 'folio_commit']) AS f
		WHERE NOT has_function_privilege(f || '(text, bytea[], bytea[], bytea[], bytea[], bytea[], bytea[], bytea[], bytea[], bigint[], bytea)', 'EXECUTE')`)
	if err != nil {
		return fmt.Errorf("check privileges: %w", err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("check privileges: %w", err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("the role lacks privileges: %s", strings.Join(missing, ", "))
	}
	return nil
}
