package metrics

import (
	"context"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/streams"
	"github.com/prometheus/client_golang/prometheus"
)

// Sources are the Stats of a node's parts, read at each scrape. A nil one
// is a part the node does not have (Pebble's on PostgreSQL, and the
// reverse): its metrics are left out.
type Sources struct {
	Sessions  func() session.Stats
	Tx        func() kv.TxStats
	Pebble    func() pebblekv.Stats
	Postgres  func() sqlkv.Stats
	ChangeLog func(ctx context.Context) (changelog.Stats, error)
	// LogBytes is what the change log's entries take (changelog.Log.Bytes).
	LogBytes func(ctx context.Context) (int64, error)
	Streams  func() streams.Stats
	Search   func(ctx context.Context) search.Stats
	// Forwards counts the requests relayed to the node holding their
	// transaction: answered there, and not reached (ops.ForwardStats).
	Forwards func() (relayed, unreachable uint64)
	// Expired counts the documents the ttl sweeper deleted.
	Expired func() uint64
}

// parts collects the parts' Stats at each scrape.
type parts struct{ src Sources }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// The parts' metrics (docs/operations.md lists them with their meanings).
var (
	txOpen      = desc("folio_transactions_open", "Interactive transactions open now.")
	txOldestAge = desc("folio_transactions_oldest_age_seconds", "Age of the oldest open interactive transaction; 0 when none is open.")
	txEnded     = desc("folio_transactions_ended_total", "Interactive transactions ended, by outcome: committed, aborted (the commit failed), rolled_back (by the client), expired (idle or too old).", "outcome")

	kvCommits      = desc("folio_kv_commits_total", "Store transactions that wrote and committed (read-only ones are not counted).")
	kvConflicts    = desc("folio_kv_conflicts_total", "Store commits rejected for a conflict with a commit made since the transaction's snapshot.")
	kvCommitErrors = desc("folio_kv_commit_errors_total", "Store commits that failed otherwise: transaction too old, store closed or failing, caller gone.")
	kvRollbacks    = desc("folio_kv_rollbacks_total", "Store transactions rolled back: by their client, or by a request that failed.")
	kvRetries      = desc("folio_kv_retries_total", "Attempts a request's own transaction was run again after a conflict (or grew too old).")
	kvAborts       = desc("folio_kv_aborts_total", "Requests' own transactions given up after their last attempt: answered ABORTED.")
	kvCommitTime   = desc("folio_kv_commit_duration_seconds", "Time of the store's part of each commit that wrote: conflict check, write and sync (on PostgreSQL the round trip).")

	pebbleGroupSize    = desc("folio_pebble_commit_group_size", "Commits written together in one Pebble batch (group commit).")
	pebbleSyncTime     = desc("folio_pebble_fsync_duration_seconds", "Time of each WAL fsync, which makes one or more commit groups durable.")
	pebbleDisk         = desc("folio_pebble_disk_bytes", "Bytes Pebble's files take on disk (tables, WAL, manifests).")
	pebbleMemTables    = desc("folio_pebble_memtable_bytes", "Bytes of Pebble's memtables.")
	pebbleCompactions  = desc("folio_pebble_compactions_total", "Compactions Pebble completed since the store opened.")
	pebbleDebt         = desc("folio_pebble_compaction_debt_bytes", "Pebble's estimate of the bytes to compact before the LSM is in shape.")
	pebbleFlushes      = desc("folio_pebble_flushes_total", "Memtable flushes since the store opened.")
	pebbleDiskFull     = desc("folio_pebble_disk_full", "1 while commits are refused for want of disk space (RESOURCE_EXHAUSTED), else 0.")
	pebbleDamaged      = desc("folio_pebble_damaged_data", "1 once Pebble found damaged data: writes are refused (DATA_LOSS) until the store is restored, else 0.")
	pebbleReadAmp      = desc("folio_pebble_read_amplification", "Sublevels and levels a read may have to look into.")
	pebbleCacheBytes   = desc("folio_pebble_block_cache_bytes", "Bytes in use in Pebble's block cache.")
	pebbleCacheHits    = desc("folio_pebble_block_cache_hits_total", "Block cache lookups that found their block.")
	pebbleCacheMisses  = desc("folio_pebble_block_cache_misses_total", "Block cache lookups that had to read their block from disk.")
	valueCacheBytes    = desc("folio_pebble_value_cache_bytes", "Bytes the value cache holds: values reads found, served again without reading Pebble.")
	valueCacheHits     = desc("folio_pebble_value_cache_hits_total", "Reads of a key served by the value cache.")
	valueCacheMisses   = desc("folio_pebble_value_cache_misses_total", "Reads of a key the value cache sent on to Pebble.")
	pgMaxConns         = desc("folio_postgres_pool_max_connections", "Size of the PostgreSQL connection pool.")
	pgConns            = desc("folio_postgres_pool_connections", "PostgreSQL connections by state: acquired (held by a transaction or a background task), idle, constructing.", "state")
	pgAcquires         = desc("folio_postgres_pool_acquires_total", "Connections handed out by the pool.")
	pgEmptyAcquires    = desc("folio_postgres_pool_empty_acquires_total", "Acquires that had to wait because no connection was idle.")
	pgCanceledAcquires = desc("folio_postgres_pool_canceled_acquires_total", "Acquires given up while waiting (the acquire timeout, or the caller gone).")
	pgAcquireWait      = desc("folio_postgres_pool_acquire_wait_seconds_total", "Total time spent waiting for a connection.")
	pgNewConns         = desc("folio_postgres_pool_new_connections_total", "Connections the pool opened.")
	pgRoundTrips       = desc("folio_postgres_round_trips_total", "Exchanges with the server: a statement, a batch of pipelined statements, or a prepare.")
	pgCommitRetries    = desc("folio_postgres_commit_retries_total", "Commits sent again after PostgreSQL itself, not Folio's validation, failed them with a serialization failure or a deadlock.")

	logPosition  = desc("folio_changelog_position", "Position of the newest durable commit in the change log (on PostgreSQL a transaction id).")
	logBytes     = desc("folio_changelog_bytes", "Bytes the change log's entries take, their records as stored.")
	logReaders   = desc("folio_changelog_readers", "Open change-log readers, by reader: streams (events and subscriptions) and search (the indexer).", "reader")
	logReaderLag = desc("folio_changelog_reader_lag_positions", "Positions between the log's end and the furthest-behind open reader of each kind.", "reader")

	streamsOpen    = desc("folio_streams_open", "Events and subscribe streams open, live or catching up.")
	streamsLive    = desc("folio_streams_live", "Streams fed live from the change log.")
	streamsPending = desc("folio_streams_pending_bytes", "Bytes queued for the streams' clients.")

	searchLag       = desc("folio_search_lag_positions", "Positions between the log's end and where the search indexer has read.")
	searchLagTime   = desc("folio_search_lag_seconds", "How long the search indexer has been behind the log's end; 0 when caught up.")
	searchIndexes   = desc("folio_search_indexes", "Search indexes, by state: ready, rebuilding, not_built (never searched).", "state")
	searchDocuments = desc("folio_search_documents", "Documents in the search indexes.")
	searchDisk      = desc("folio_search_disk_bytes", "Bytes the search indexes take on disk.")
	searchColumns   = desc("folio_search_number_column_bytes", "Memory of the search columns that answer number ranges, key-order pages and facets.")

	documentsExpired = desc("folio_documents_expired_total", "Documents past their collection's ttl that the sweeper deleted (a write onto an expired document's key deletes it too, uncounted here).")
	forwarded        = desc("folio_forwarded_requests_total", "Requests of transactions held by another node, relayed there (several nodes on one PostgreSQL database), by result: relayed (that node answered), unreachable (answered UNAVAILABLE here).", "result")
)

// Describe sends every description: the registry checks them once.
func (p *parts) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{txOpen, txOldestAge, txEnded,
		kvCommits, kvConflicts, kvCommitErrors, kvRollbacks, kvRetries, kvAborts, kvCommitTime,
		pebbleGroupSize, pebbleSyncTime, pebbleDisk, pebbleMemTables, pebbleCompactions, pebbleDebt, pebbleFlushes, pebbleDiskFull, pebbleDamaged, pebbleReadAmp, pebbleCacheBytes, pebbleCacheHits, pebbleCacheMisses,
		valueCacheBytes, valueCacheHits, valueCacheMisses,
		pgMaxConns, pgConns, pgAcquires, pgEmptyAcquires, pgCanceledAcquires, pgAcquireWait, pgNewConns, pgRoundTrips, pgCommitRetries,
		logPosition, logBytes, logReaders, logReaderLag, streamsOpen, streamsLive, streamsPending,
		searchLag, searchLagTime, searchIndexes, searchDocuments, searchDisk, searchColumns, forwarded, documentsExpired} {
		ch <- d
	}
}

// Collect reads each part's Stats and sends them as metrics.
func (p *parts) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	e := emitter{ch}
	if p.src.Sessions != nil {
		e.sessions(p.src.Sessions())
	}
	if p.src.Tx != nil {
		e.tx(p.src.Tx())
	}
	if p.src.Pebble != nil {
		e.pebble(p.src.Pebble())
	}
	if p.src.Postgres != nil {
		e.postgres(p.src.Postgres())
	}
	if p.src.ChangeLog != nil {
		if st, err := p.src.ChangeLog(ctx); err != nil {
			ch <- prometheus.NewInvalidMetric(logPosition, err)
		} else {
			e.changeLog(st)
		}
	}
	if p.src.LogBytes != nil {
		if n, err := p.src.LogBytes(ctx); err != nil {
			ch <- prometheus.NewInvalidMetric(logBytes, err)
		} else {
			e.gauge(logBytes, float64(n))
		}
	}
	if p.src.Streams != nil {
		st := p.src.Streams()
		e.gauge(streamsOpen, float64(st.Open))
		e.gauge(streamsLive, float64(st.Live))
		e.gauge(streamsPending, float64(st.PendingBytes))
	}
	if p.src.Search != nil {
		e.search(p.src.Search(ctx))
	}
	if p.src.Forwards != nil {
		relayed, unreachable := p.src.Forwards()
		e.counter(forwarded, float64(relayed), "relayed")
		e.counter(forwarded, float64(unreachable), "unreachable")
	}
	if p.src.Expired != nil {
		e.counter(documentsExpired, float64(p.src.Expired()))
	}
}

// emitter sends constant metrics made from a snapshot.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (e emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// histogram sends a kv histogram, whose counts are per bucket, with the
// cumulative counts Prometheus wants.
func (e emitter) histogram(d *prometheus.Desc, h kv.HistogramSnapshot) {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	e.ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
}

func (e emitter) sessions(st session.Stats) {
	e.gauge(txOpen, float64(st.Open))
	e.gauge(txOldestAge, st.OldestAge.Seconds())
	e.counter(txEnded, float64(st.Committed), "committed")
	e.counter(txEnded, float64(st.Aborted), "aborted")
	e.counter(txEnded, float64(st.RolledBack), "rolled_back")
	e.counter(txEnded, float64(st.Expired), "expired")
}

func (e emitter) tx(st kv.TxStats) {
	e.counter(kvCommits, float64(st.Commits))
	e.counter(kvConflicts, float64(st.Conflicts))
	e.counter(kvCommitErrors, float64(st.CommitErrors))
	e.counter(kvRollbacks, float64(st.Rollbacks))
	e.counter(kvRetries, float64(st.Retries))
	e.counter(kvAborts, float64(st.Aborts))
	e.histogram(kvCommitTime, st.CommitSeconds)
}

func (e emitter) pebble(st pebblekv.Stats) {
	e.histogram(pebbleGroupSize, st.CommitGroupSize)
	e.histogram(pebbleSyncTime, st.SyncSeconds)
	e.gauge(pebbleDisk, float64(st.DiskBytes))
	e.gauge(pebbleMemTables, float64(st.MemTableBytes))
	e.counter(pebbleCompactions, float64(st.Compactions))
	e.gauge(pebbleDebt, float64(st.CompactionDebtBytes))
	e.counter(pebbleFlushes, float64(st.Flushes))
	e.gauge(pebbleReadAmp, float64(st.ReadAmp))
	e.gauge(pebbleDiskFull, oneIf(st.DiskFull))
	e.gauge(pebbleDamaged, oneIf(st.Damaged))
	e.gauge(pebbleCacheBytes, float64(st.BlockCacheBytes))
	e.counter(pebbleCacheHits, float64(st.BlockCacheHits))
	e.counter(pebbleCacheMisses, float64(st.BlockCacheMisses))
	e.gauge(valueCacheBytes, float64(st.ValueCacheBytes))
	e.counter(valueCacheHits, float64(st.ValueCacheHits))
	e.counter(valueCacheMisses, float64(st.ValueCacheMisses))
}

func (e emitter) postgres(st sqlkv.Stats) {
	e.gauge(pgMaxConns, float64(st.MaxConns))
	e.gauge(pgConns, float64(st.AcquiredConns), "acquired")
	e.gauge(pgConns, float64(st.IdleConns), "idle")
	e.gauge(pgConns, float64(st.ConstructingConns), "constructing")
	e.counter(pgAcquires, float64(st.Acquires))
	e.counter(pgEmptyAcquires, float64(st.EmptyAcquires))
	e.counter(pgCanceledAcquires, float64(st.CanceledAcquires))
	e.counter(pgAcquireWait, st.AcquireWait.Seconds())
	e.counter(pgNewConns, float64(st.NewConns))
	e.counter(pgRoundTrips, float64(st.RoundTrips))
	e.counter(pgCommitRetries, float64(st.CommitRetries))
}

// The change log's readers, as they name themselves; a reader of another
// name (none today) is counted under its own.
var readerNames = []string{"streams", "search"}

func (e emitter) changeLog(st changelog.Stats) {
	e.gauge(logPosition, float64(st.LastPosition))
	count := map[string]int{}
	lag := map[string]uint64{}
	for _, n := range readerNames {
		count[n], lag[n] = 0, 0 // a kind with no reader open shows 0, not nothing
	}
	for _, r := range st.Readers {
		count[r.Name]++
		if st.LastPosition > r.Position {
			lag[r.Name] = max(lag[r.Name], uint64(st.LastPosition-r.Position))
		}
	}
	for name, n := range count {
		e.gauge(logReaders, float64(n), name)
		e.gauge(logReaderLag, float64(lag[name]), name)
	}
}

func (e emitter) search(st search.Stats) {
	e.gauge(searchLag, float64(st.LagPositions))
	e.gauge(searchLagTime, st.LagSeconds)
	e.gauge(searchColumns, float64(st.NumberColumnBytes))
	var ready, rebuilding, dormant, docs, disk float64
	for _, ix := range st.Indexes {
		switch {
		case ix.Ready:
			ready++
		case ix.Dormant:
			dormant++
		default:
			rebuilding++
		}
		docs += float64(ix.Documents)
		disk += float64(ix.DiskBytes)
	}
	e.gauge(searchIndexes, ready, "ready")
	e.gauge(searchIndexes, rebuilding, "rebuilding")
	e.gauge(searchIndexes, dormant, "not_built")
	e.gauge(searchDocuments, docs)
	e.gauge(searchDisk, disk)
}

// oneIf is a boolean as a gauge's value.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
