package search

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/atomicfile"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/vector"
)

// Vector fields. A collection (or search index) whose schema has vector
// fields keeps one vector.Index per field beside its Bleve index, under
// the documents' Bleve ids (fields.DocID): the same reader of the log
// feeds both, a rebuild builds both, and a search finds the nearest
// neighbours in the one and the filter's matches in the other. Vectors are
// not Bleve fields (package fields leaves them out).
//
// The graphs live in memory. They are saved as snapshots (vector.WriteTo)
// in the index's directory, each holding the log position it has applied
// up to: at a clean close, at the end of a rebuild, and now and then while
// writes come (snapshotDue). An index opened from disk takes its vectors
// from the snapshot and goes back to the lower of the two positions, the
// Bleve index's and the snapshot's: replaying the log from there converges
// both, since each record carries the whole document. Without a usable
// snapshot (none, damaged, or of other fields) the index is rebuilt from
// the documents, as an unreadable Bleve index is.

// vectorSet is a collection's vector indexes, one per vector field.
type vectorSet struct {
	fields []*vectorField
	// changes is how many puts and deletes came since the last snapshot,
	// savedAt when it was taken, and savedPos the position it holds
	// (moved on without rewriting the graphs while nothing changes); the
	// indexer's goroutine only, or a rebuild's before the set is the
	// collection's.
	changes  int
	savedAt  time.Time
	savedPos kv.Position
}

// vectorField is one vector field's index.
type vectorField struct {
	path     string
	dims     int
	distance string
	idx      *vector.Index
}

// vectorFieldsOf lists the vector fields of s: at the top level and in
// nested objects, not inside arrays (an element has no path of its own),
// and with dimensions a graph can take (a schema stored before they were
// required and bounded may have a vector field without: it has no graph,
// and a search on it is refused).
func vectorFieldsOf(s *schema.Schema) []*schema.Field {
	if s == nil {
		return nil
	}
	var out []*schema.Field
	var walk func(fs []*schema.Field)
	walk = func(fs []*schema.Field) {
		for _, f := range fs {
			switch {
			case f.Vector && f.Dimensions >= 1 && f.Dimensions <= vector.MaxDims:
				out = append(out, f)
			case f.Vector:
			case f.Type == schema.Object:
				walk(f.Properties)
			}
		}
	}
	walk(s.Fields())
	return out
}

// metricOf is the vector package's metric for a schema distance.
func metricOf(distance string) vector.Metric {
	switch distance {
	case schema.DistanceEuclidean:
		return vector.Euclidean
	case schema.DistanceDot:
		return vector.Dot
	}
	return vector.Cosine
}

// newVectorSet returns empty indexes for s's vector fields; nil when it
// has none.
func newVectorSet(s *schema.Schema) *vectorSet {
	fs := vectorFieldsOf(s)
	if len(fs) == 0 {
		return nil
	}
	vs := &vectorSet{savedAt: time.Now()}
	for _, f := range fs {
		vs.fields = append(vs.fields, &vectorField{path: f.Path, dims: f.Dimensions, distance: f.Distance,
			idx: vector.New(f.Dimensions, metricOf(f.Distance), vector.Options{})})
	}
	return vs
}

// sameFields reports whether vs holds exactly s's vector fields (paths,
// dimensions and distances); a nil vs holds none.
func (vs *vectorSet) sameFields(s *schema.Schema) bool {
	fs := vectorFieldsOf(s)
	if vs == nil {
		return len(fs) == 0
	}
	if len(fs) != len(vs.fields) {
		return false
	}
	for i, f := range fs {
		v := vs.fields[i]
		if v.path != f.Path || v.dims != f.Dimensions || v.distance != f.Distance {
			return false
		}
	}
	return true
}

// field returns the index of the vector field at path.
func (vs *vectorSet) field(path string) *vectorField {
	if vs == nil {
		return nil
	}
	for _, f := range vs.fields {
		if f.path == path {
			return f
		}
	}
	return nil
}

// put indexes the vectors of a document (its JSON data) under id: a field
// absent or null removes the id's vector. A value that is no vector the
// index takes (the schema refuses it on write, so only a document stored
// under an older schema has one) removes it too, and is returned as an
// error for the log.
func (vs *vectorSet) put(id string, data []byte) error {
	if vs == nil {
		return nil
	}
	vs.changes++
	var errs []error
	for _, f := range vs.fields {
		raw, err := jsondoc.Get(data, f.path)
		if err == nil && raw != nil && string(raw) != "null" {
			var v []float32
			if v, err = parseVector(raw); err == nil {
				err = f.idx.Put(id, v)
			}
		}
		if err != nil || raw == nil || string(raw) == "null" {
			f.idx.Delete(id)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("field %s: %w", f.path, err))
		}
	}
	return errors.Join(errs...)
}

// remove deletes id's vectors.
func (vs *vectorSet) remove(id string) {
	if vs == nil {
		return
	}
	vs.changes++
	for _, f := range vs.fields {
		f.idx.Delete(id)
	}
}

// parseVector reads a JSON array of numbers as float32s.
func parseVector(raw []byte) ([]float32, error) {
	a, err := jsonscan.ArrayAt(raw, 0)
	if err != nil {
		return nil, err
	}
	var v []float32
	for {
		i, ok, err := a.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return v, nil
		}
		e, _, err := jsonscan.NumberEnd(raw, i)
		if err != nil {
			return nil, fmt.Errorf("a vector holds numbers only: %w", err)
		}
		x, err := strconv.ParseFloat(string(raw[i:e]), 32)
		if err != nil {
			return nil, err
		}
		v = append(v, float32(x))
		a.Resume(e)
	}
}

// snapshotDue reports whether vs should be saved after a batch: once a
// tenth of its vectors (at least a thousand) have changed and half a
// minute has passed, or any change and five minutes. A snapshot costs a
// write of the whole graph; replaying the changes since the last one is
// what a crash costs.
func (vs *vectorSet) snapshotDue(now time.Time) bool {
	if vs == nil || vs.changes == 0 {
		return false
	}
	since := now.Sub(vs.savedAt)
	n := 0
	for _, f := range vs.fields {
		n = max(n, f.idx.Len())
	}
	return since >= 5*time.Minute || since >= 30*time.Second && vs.changes >= max(1000, n/10)
}

// The snapshot file of an index directory: the set's fields and the log
// position, then each field's vector.Index snapshot, each framed by its
// length. Written to a temporary file, synced and renamed over the last.
//
//	"FOLIOVS1" position:u64 fields:u32
//	per field: pathLen:u16 path dims:u32 distanceLen:u8 distance bytes:u64 snapshot
const (
	vectorsFile  = "folio-vectors"
	vectorsMagic = "FOLIOVS1"
)

// save writes vs's snapshot at position at into dir.
func (vs *vectorSet) save(dir string, at kv.Position) error {
	if vs == nil || dir == "" {
		return nil
	}
	return atomicfile.Write(filepath.Join(dir, vectorsFile), 0o600, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		hdr := binary.LittleEndian.AppendUint64([]byte(vectorsMagic), uint64(at))
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(vs.fields)))
		w.Write(hdr)
		for _, vf := range vs.fields {
			h := binary.LittleEndian.AppendUint16(nil, uint16(len(vf.path)))
			h = append(h, vf.path...)
			h = binary.LittleEndian.AppendUint32(h, uint32(vf.dims))
			h = append(h, byte(len(vf.distance)))
			h = append(h, vf.distance...)
			// The length comes before the snapshot: written to a counter
			// first would take the graph twice; the frame's length is
			// patched in after, at its offset.
			w.Write(h)
			if err := w.Flush(); err != nil {
				return err
			}
			lenAt, err := f.Seek(0, io.SeekCurrent)
			if err != nil {
				return err
			}
			w.Write(make([]byte, 8))
			n, err := vf.idx.WriteTo(w)
			if err == nil {
				err = w.Flush()
			}
			if err == nil {
				_, err = f.WriteAt(binary.LittleEndian.AppendUint64(nil, uint64(n)), lenAt)
			}
			if err != nil {
				return err
			}
		}
		return w.Flush()
	})
}

// errNoVectors: an index directory without the snapshot its schema's
// vector fields need.
var errNoVectors = errors.New("no snapshot of the vector fields")

// loadVectors reads the snapshot in dir for s's vector fields and the
// position it holds; an error if there is none, it is damaged, or it holds
// other fields.
func loadVectors(dir string, s *schema.Schema) (*vectorSet, kv.Position, error) {
	want := newVectorSet(s)
	f, err := os.Open(filepath.Join(dir, vectorsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, errNoVectors
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	hdr := make([]byte, len(vectorsMagic)+12)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr[:len(vectorsMagic)]) != vectorsMagic {
		return nil, 0, fmt.Errorf("the vectors' snapshot has no header (%v)", err)
	}
	at := kv.Position(binary.LittleEndian.Uint64(hdr[len(vectorsMagic):]))
	if n := binary.LittleEndian.Uint32(hdr[len(vectorsMagic)+8:]); int(n) != len(want.fields) {
		return nil, 0, fmt.Errorf("the vectors' snapshot holds %d fields, the schema %d", n, len(want.fields))
	}
	for _, vf := range want.fields {
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, err
		}
		path := make([]byte, binary.LittleEndian.Uint16(b[:]))
		var dims [4]byte
		var dl [1]byte
		if _, err := io.ReadFull(r, path); err != nil {
			return nil, 0, err
		}
		if _, err := io.ReadFull(r, dims[:]); err != nil {
			return nil, 0, err
		}
		if _, err := io.ReadFull(r, dl[:]); err != nil {
			return nil, 0, err
		}
		dist := make([]byte, dl[0])
		if _, err := io.ReadFull(r, dist); err != nil {
			return nil, 0, err
		}
		if string(path) != vf.path || int(binary.LittleEndian.Uint32(dims[:])) != vf.dims || string(dist) != vf.distance {
			return nil, 0, fmt.Errorf("the vectors' snapshot is of field %s (%d dimensions, %s), the schema's %s (%d, %s)",
				path, binary.LittleEndian.Uint32(dims[:]), dist, vf.path, vf.dims, vf.distance)
		}
		var size [8]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return nil, 0, err
		}
		frame := io.LimitReader(r, int64(binary.LittleEndian.Uint64(size[:])))
		idx, err := vector.ReadIndex(frame)
		if err != nil {
			return nil, 0, fmt.Errorf("the vectors' snapshot of field %s: %w", vf.path, err)
		}
		// What ReadIndex left of the frame (none, as written) before the
		// next field's.
		if _, err := io.Copy(io.Discard, frame); err != nil {
			return nil, 0, err
		}
		if idx.Dims() != vf.dims || idx.Metric() != metricOf(vf.distance) {
			return nil, 0, fmt.Errorf("the vectors' snapshot of field %s is of %d dimensions by %s", vf.path, idx.Dims(), idx.Metric())
		}
		vf.idx = idx
	}
	want.savedPos = at
	return want, at, nil
}

// keepVectors saves the vector sets a snapshot is due for (snapshotDue),
// and moves the position of the others' snapshots on when nothing changed
// since: a set written rarely must not hold the log's replay back to its
// last change (the log may be trimmed past it, and a replay that finds it
// trimmed rebuilds every index). The indexer's goroutine calls it after
// each batch; the files are written outside mu.
func (ix *Indexer) keepVectors(now time.Time) {
	type job struct {
		ci *collIndex
		vs *vectorSet
		at kv.Position
	}
	var jobs []job
	ix.mu.Lock()
	for _, ci := range ix.colls {
		vs := ci.vectors
		if vs == nil || ci.dir == "" || ci.idx == nil || ci.rebuilding || ci.dropped || ci.applied <= vs.savedPos {
			continue
		}
		if vs.snapshotDue(now) || vs.changes == 0 && now.Sub(vs.savedAt) >= ix.opts.WatermarkEvery {
			jobs = append(jobs, job{ci, vs, ci.applied})
		}
	}
	ix.mu.Unlock()
	for _, j := range jobs {
		if err := ix.saveVectors(j.ci, j.vs, j.at, now); err != nil {
			ix.log.Warn("search: saving the vectors' snapshot failed; the next start may replay more of the log or rebuild the index", "db", j.ci.db, "collection", j.ci.name, "err", err)
		}
	}
}

// saveVectors writes vs's snapshot at position at into ci's directory, or
// only moves the position on when vs has not changed since its last one,
// unless vs is no longer ci's.
func (ix *Indexer) saveVectors(ci *collIndex, vs *vectorSet, at kv.Position, now time.Time) error {
	ci.saving.Lock()
	defer ci.saving.Unlock()
	ix.mu.Lock()
	current := ci.vectors == vs && !ci.rebuilding && !ci.dropped
	ix.mu.Unlock()
	if !current {
		return nil
	}
	var err error
	if vs.changes == 0 && vs.savedPos != 0 {
		err = moveVectorsPosition(ci.dir, at)
	} else {
		err = vs.save(ci.dir, at)
	}
	if err == nil {
		vs.changes, vs.savedAt, vs.savedPos = 0, now, at
	}
	return err
}

// moveVectorsPosition rewrites the position in the header of dir's
// snapshot: an aligned 8-byte write in the first block, which lands whole.
func moveVectorsPosition(dir string, at kv.Position) error {
	f, err := os.OpenFile(filepath.Join(dir, vectorsFile), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(binary.LittleEndian.AppendUint64(nil, uint64(at)), int64(len(vectorsMagic))); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PrepareVector checks a search's vector query against the schema: a JSON
// object naming one vector field with the query vector, as the original
// took it ({"field": [numbers]}), and optionally "top_k", the number of
// neighbours (at most MaxTopK). Every error is INVALID_ARGUMENT.
func PrepareVector(s *schema.Schema, raw []byte) (*VectorQuery, error) {
	names, values, err := jsonscan.Members[[]byte](raw)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "vector must be an object naming a vector field and the query vector, as {\"field\": [numbers]}")
	}
	q := &VectorQuery{}
	for _, name := range names {
		v := values[name]
		if name == "top_k" {
			n, ok := jsonscan.ParseInt(v)
			if !ok || n < 1 || n > MaxTopK {
				return nil, apierror.Errorf(apierror.InvalidArgument, "top_k must be an integer from 1 to %d", MaxTopK)
			}
			q.TopK = int(n)
			continue
		}
		if q.Field != "" {
			return nil, apierror.Errorf(apierror.InvalidArgument, "vector names fields '%s' and '%s': a search has one query vector", q.Field, name)
		}
		f, ok := s.Field(name)
		if !ok || !f.Vector {
			return nil, apierror.Errorf(apierror.InvalidArgument, "'%s' is not a vector field of the schema (an array of format vector)", name)
		}
		vec, err := parseVector(v)
		if err != nil {
			return nil, apierror.Errorf(apierror.InvalidArgument, "the query vector of field '%s' must be an array of numbers within a 32-bit float's range", name)
		}
		if f.Dimensions < 1 || f.Dimensions > vector.MaxDims {
			return nil, apierror.Errorf(apierror.InvalidArgument, "vector field '%s' has %d dimensions, none a search can use (1 to %d): give it dimensions in the schema", name, f.Dimensions, vector.MaxDims)
		}
		if len(vec) != f.Dimensions {
			return nil, apierror.Errorf(apierror.InvalidArgument, "the query vector has %d dimensions, field '%s' has %d", len(vec), name, f.Dimensions)
		}
		if f.Distance == schema.DistanceCosine && zeroLength(vec) {
			return nil, apierror.Errorf(apierror.InvalidArgument, "the query vector has length zero: no direction, so no cosine distance to field '%s'", name)
		}
		q.Field, q.Vector = name, vec
	}
	if q.Field == "" {
		return nil, apierror.Errorf(apierror.InvalidArgument, "vector names no vector field: {\"field\": [numbers]}")
	}
	return q, nil
}

func zeroLength(v []float32) bool {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return n == 0
}
