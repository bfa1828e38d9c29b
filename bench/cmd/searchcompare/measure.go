package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// latencies are the durations of one measured thing, in any order.
type latencies []time.Duration

// percentile is the p-th percentile (0 < p ≤ 100) by the nearest rank;
// zero for none.
func (l latencies) percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// measureInterleaved runs q on each of engines in turn, one query at a
// time, starting each turn from a different engine, until each has run n
// times or spent limit searching (but at least minRuns times). It returns
// each engine's latencies and last outcome, by name. Taking turns, every
// engine meets the machine's fast and slow minutes alike: the machine
// runs at two speeds, minutes apart, so engines measured one after the
// other were compared across them.
func measureInterleaved(ctx context.Context, engines []engine, q query, n int, limit time.Duration) (map[string]latencies, map[string]outcome, error) {
	const minRuns = 5
	lat := make(map[string]latencies, len(engines))
	last := make(map[string]outcome, len(engines))
	spent := make([]time.Duration, len(engines))
	active := func(i int) bool {
		runs := len(lat[engines[i].name()])
		return runs < n && (runs < minRuns || spent[i] < limit)
	}
	for turn := 0; ; turn++ {
		ran := false
		for k := range engines {
			i := (turn + k) % len(engines)
			if !active(i) {
				continue
			}
			e := engines[i]
			start := time.Now()
			o, err := e.search(ctx, q)
			if err != nil {
				return nil, nil, fmt.Errorf("%s, %s: %w", e.name(), q.kind, err)
			}
			took := time.Since(start)
			spent[i] += took
			lat[e.name()] = append(lat[e.name()], took)
			last[e.name()] = o
			ran = true
		}
		if !ran {
			return lat, last, nil
		}
	}
}

// measureQuery runs q on e one after another, until n runs or until the
// time is up (but at least minRuns), and returns each run's latency and
// the outcome of the last.
func measureQuery(ctx context.Context, e engine, q query, n int, limit time.Duration) (latencies, outcome, error) {
	const minRuns = 5
	var lat latencies
	var last outcome
	deadline := time.Now().Add(limit)
	for i := 0; i < n && (i < minRuns || time.Now().Before(deadline)); i++ {
		start := time.Now()
		o, err := e.search(ctx, q)
		if err != nil {
			return nil, outcome{}, fmt.Errorf("%s, %s: %w", e.name(), q.kind, err)
		}
		lat = append(lat, time.Since(start))
		last = o
	}
	return lat, last, nil
}

// commitToSearchable runs writers clients for d, each inserting documents
// with a word of their own and searching for that word as soon as the
// insert is acknowledged; the time from the acknowledgement to the answer
// that holds the document is how long a committed write takes to become
// searchable, as a client sees it (the search's own time included). For
// Folio the search waits for the index to hold every write acknowledged
// before it; for the others, the index is written in the commit.
func commitToSearchable(ctx context.Context, e engine, writers int, d time.Duration, firstID int64, filler string) (latencies, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var lat latencies
	var firstErr error
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				word := fmt.Sprintf("ctswriter%sx%s", letters(w), letters(i))
				id := firstID + int64(w)*1_000_000 + int64(i)
				err := e.insert(ctx, doc{ID: id, Title: word, Body: filler, Tag: "written", Source: "writer", Rank: 1, Size: 1})
				acked := time.Now()
				var o outcome
				if err == nil {
					o, err = e.search(ctx, query{kind: "written", words: []string{word}})
				}
				if err == nil && (o.found != 1 || o.firstID != id) {
					err = fmt.Errorf("a search right after inserting %d finds %d documents, the first %d", id, o.found, o.firstID)
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: commit to searchable: %w", e.name(), err)
					}
					mu.Unlock()
					cancel()
					return
				}
				lat = append(lat, time.Since(acked))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, firstErr
}

// letters spells n in the letters a to j, so that a word made with it is
// one token for every engine (digits would be, too, but Bleve and
// PostgreSQL treat mixed words differently).
func letters(n int) string {
	s := fmt.Sprint(n)
	b := []byte(s)
	for i, c := range b {
		b[i] = 'a' + (c - '0')
	}
	return string(b)
}
