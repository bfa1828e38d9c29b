package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// A snapshot, little-endian throughout:
//
//	"FOLIOVEC" version:u32
//	dims:u32 metric:u8 M:u32 efConstruction:u32 efSearch:u32 seed:i64
//	nodes:u32 entry:u32
//	per node: state:u8 (live or tombstone) keyLen:u16 key level:u8
//	    vector:dims×f32, per layer 0..level: count:u16 ids:count×u32
//	crc:u32, CRC-32C of every byte before it
//
// Tombstones are written as they are (with their links), so that the
// graph read back is the graph written; free slots are left out and the
// nodes numbered again in order. ReadIndex checks every count and id
// against the limits and the header before it uses it, and allocates
// only as records arrive (a record of at least 4·dims+10 bytes for a
// node of 4·dims+4·(2M+1)+70, M at most 64), so that a damaged file
// costs an error, never a panic or an allocation out of proportion to
// its length.
const (
	snapshotMagic   = "FOLIOVEC"
	snapshotVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes a snapshot of the index to w. Puts and deletes wait
// while it is written.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	cw := &countingWriter{w: w}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(cw, crc), 1<<16)
	e := encoder{w: bw}
	e.bytes([]byte(snapshotMagic))
	e.u32(snapshotVersion)
	e.u32(uint32(x.dims))
	e.u8(uint8(x.metric))
	e.u32(uint32(x.opt.M))
	e.u32(uint32(x.opt.EfConstruction))
	e.u32(uint32(x.opt.EfSearch))
	e.u64(uint64(x.opt.Seed))
	// Nodes are numbered again without the free slots.
	number := make([]uint32, len(x.state))
	nodes := uint32(0)
	for slot, st := range x.state {
		if st != free {
			number[slot] = nodes
			nodes++
		}
	}
	e.u32(nodes)
	entry := uint32(math.MaxUint32)
	if x.hasEntry {
		entry = number[x.entry]
	}
	e.u32(entry)
	for slot, st := range x.state {
		if st == free {
			continue
		}
		e.u8(st)
		s := uint32(slot)
		e.u16(uint16(len(x.keys[s])))
		e.bytes([]byte(x.keys[s]))
		e.u8(x.level[s])
		for _, f := range x.vec(s) {
			e.u32(math.Float32bits(f))
		}
		for lc := 0; lc <= int(x.level[s]); lc++ {
			ls := x.links(s, lc)
			e.u16(uint16(len(ls)))
			for _, id := range ls {
				e.u32(number[id])
			}
		}
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	if e.err == nil {
		// The checksum goes to w only: it is of the bytes before it.
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], crc.Sum32())
		_, e.err = cw.Write(b[:])
	}
	return cw.n, e.err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type encoder struct {
	w   *bufio.Writer
	err error
	b   [8]byte
}

func (e *encoder) bytes(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}
func (e *encoder) u8(v uint8) {
	if e.err == nil {
		e.err = e.w.WriteByte(v)
	}
}
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.b[:], v); e.bytes(e.b[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.b[:], v); e.bytes(e.b[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.b[:], v); e.bytes(e.b[:8]) }

// ErrSnapshot is wrapped by every error of ReadIndex about the
// snapshot's content (not about reading it).
var ErrSnapshot = errors.New("vector: not a valid index snapshot")

// ReadIndex reads a snapshot written by WriteTo. It reads r to the end of
// the snapshot and refuses, with an error, a foreign, damaged or
// truncated one.
func ReadIndex(r io.Reader) (*Index, error) {
	crc := crc32.New(castagnoli)
	d := &decoder{r: bufio.NewReaderSize(r, 1<<16), crc: crc}
	x, err := d.index()
	if err != nil {
		return nil, err
	}
	sum := crc.Sum32()
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return nil, d.fail(err)
	}
	if binary.LittleEndian.Uint32(b[:]) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrSnapshot)
	}
	return x, nil
}

type decoder struct {
	r   *bufio.Reader
	crc hash.Hash32
	b   [8]byte
	err error
}

func (d *decoder) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated", ErrSnapshot)
	}
	return fmt.Errorf("vector: read snapshot: %w", err)
}

func (d *decoder) read(n int) []byte {
	if d.err != nil {
		return d.b[:n]
	}
	if _, err := io.ReadFull(d.r, d.b[:n]); err != nil {
		d.err = d.fail(err)
		return d.b[:n]
	}
	d.crc.Write(d.b[:n])
	return d.b[:n]
}

func (d *decoder) u8() uint8   { return d.read(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.read(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.read(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.read(8)) }

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	p := make([]byte, n) // n is at most MaxKeyLen
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.err = d.fail(err)
		return nil
	}
	d.crc.Write(p)
	return p
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSnapshot}, args...)...)
}

func (d *decoder) index() (*Index, error) {
	if string(d.read(8)) != snapshotMagic {
		if d.err != nil {
			return nil, d.err
		}
		return nil, bad("no %s header", snapshotMagic)
	}
	if v := d.u32(); d.err == nil && v != snapshotVersion {
		return nil, bad("version %d, this reads %d", v, snapshotVersion)
	}
	dims, metric := d.u32(), Metric(d.u8())
	o := Options{M: int(d.u32()), EfConstruction: int(d.u32()), EfSearch: int(d.u32()), Seed: int64(d.u64())}
	slots, entry := d.u32(), d.u32()
	if d.err != nil {
		return nil, d.err
	}
	if dims > MaxDims || o.M > maxM || o.EfConstruction > maxEf || o.EfSearch > maxEf {
		return nil, bad("header out of bounds")
	}
	x, err := newIndex(int(dims), metric, o)
	if err != nil {
		return nil, bad("%v", err)
	}
	if x.opt != o {
		return nil, bad("options not set") // a zero option would have taken a default
	}
	for slot := uint32(0); slot < slots; slot++ {
		if err := d.slot(x, slot, slots); err != nil {
			return nil, err
		}
	}
	if err := x.checkGraph(entry); err != nil {
		return nil, err
	}
	// The draw of levels goes on from the seed and the slots, not from
	// where it stood when written: any draw serves, and it stays
	// reproducible.
	x.pcg.Seed(uint64(o.Seed), uint64(slots))
	return x, nil
}

// slot reads one slot's record into x.
func (d *decoder) slot(x *Index, slot, slots uint32) error {
	st := d.u8()
	if d.err != nil {
		return d.err
	}
	if st != live && st != tombstone {
		return bad("slot %d: state %d", slot, st)
	}
	key := string(d.bytes(int(d.u16())))
	lvl := int(d.u8())
	if d.err != nil {
		return d.err
	}
	if key == "" || lvl > maxLevel {
		return bad("slot %d: empty key or level %d", slot, lvl)
	}
	for range x.dims {
		f := math.Float32frombits(d.u32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return bad("slot %d: a component not finite", slot)
		}
		x.vecs = append(x.vecs, f)
	}
	x.links0 = append(x.links0, make([]uint32, x.m0+1)...)
	x.upper = append(x.upper, nil)
	if lvl > 0 {
		x.upper[slot] = make([]uint32, lvl*(x.m+1))
	}
	x.keys = append(x.keys, key)
	x.level = append(x.level, uint8(lvl))
	x.state = append(x.state, st)
	for lc := 0; lc <= lvl; lc++ {
		n := int(d.u16())
		if d.err != nil {
			return d.err
		}
		if n > x.capacity(lc) {
			return bad("slot %d: %d links at layer %d", slot, n, lc)
		}
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = d.u32()
			if d.err == nil && (ids[i] >= slots || ids[i] == slot) {
				return bad("slot %d: link to %d", slot, ids[i])
			}
		}
		x.setLinks(slot, lc, ids)
	}
	if d.err != nil {
		return d.err
	}
	if st == live {
		if _, dup := x.ids[key]; dup {
			return bad("key %q twice", key)
		}
		x.ids[key] = slot
	} else {
		x.tombstones++
	}
	return nil
}

// checkGraph checks what the slots could not check one by one: that
// every link reaches a linked node of the link's layer, and that the
// entry point is a node of the top level.
func (x *Index) checkGraph(entry uint32) error {
	for slot := range x.state {
		for lc := 0; lc <= int(x.level[slot]); lc++ {
			for _, id := range x.links(uint32(slot), lc) {
				if int(x.level[id]) < lc {
					return bad("slot %d: link to %d at layer %d", slot, id, lc)
				}
			}
		}
	}
	x.chooseEntry()
	if entry == math.MaxUint32 {
		if x.hasEntry {
			return bad("no entry point")
		}
		return nil
	}
	if int(entry) >= len(x.state) || x.state[entry] == free || int(x.level[entry]) != x.top {
		return bad("entry point %d", entry)
	}
	x.entry, x.hasEntry = entry, true
	return nil
}
