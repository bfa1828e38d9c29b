// Package vector is an approximate-nearest-neighbour index of float32
// vectors, one per vector field, keyed by the documents' storage keys.
// It imports nothing of Folio's (tests/archtest): the search indexer
// feeds it and saves it.
//
// The index is a Hierarchical Navigable Small World graph as in Malkov and
// Yashunin, "Efficient and robust approximate nearest neighbor search
// using Hierarchical Navigable Small World graphs" (arXiv:1603.09320,
// 2016; IEEE TPAMI 2018): insertion is the paper's Algorithm 1, a layer is
// searched by Algorithm 2, neighbours are chosen by the heuristic of
// Algorithm 4 (without extending the candidates or keeping the pruned
// ones, as hnswlib does too), and a query is Algorithm 5. M links a node
// at each upper layer, 2M at layer 0, and levels are drawn with
// mL = 1/ln(M).
//
// Beyond the paper:
//   - A filter applies before the neighbours are chosen: a filtered query
//     returns k hits whenever k allowed vectors exist. A small allowed set
//     is scanned exactly; a larger one is searched in the graph through
//     every node, with only allowed nodes taken as results (filter.go).
//   - Deletion marks a node as a tombstone, which the search walks through
//     and never returns; when tombstones reach a tenth of the nodes, the
//     links to them are mended from their own links (by the same
//     heuristic) and their slots are reused (compact.go). A replaced
//     vector is a deletion and an insertion.
//   - A snapshot (snapshot.go) is versioned and checksummed; ReadIndex
//     refuses a damaged or foreign one with an error.
//
// Concurrency: searches share a read lock; Put and Delete take the write
// lock, so a search waits for at most one insertion (about as long as
// one search with efConstruction for ef).
package vector
