package search_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentty/agentty/search"
)

// vocabulary is 5,000 made-up words drawn with a Zipf distribution, so
// that a corpus has a few very common words and many rare ones, as text
// does.
func vocabulary() []string {
	r := rand.New(rand.NewSource(7))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, 5000)
	for i := range words {
		n := 3 + r.Intn(7)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.Intn(len(letters))]
		}
		words[i] = string(b)
	}
	return words
}

// writeCorpus writes files files of lines lines of about ten words each.
func writeCorpus(b *testing.B, dir string, files, lines int) []string {
	b.Helper()
	words := vocabulary()
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(words)-1))
	for f := 0; f < files; f++ {
		var sb strings.Builder
		for l := 0; l < lines; l++ {
			for w := 0; w < 10; w++ {
				sb.WriteString(words[z.Uint64()])
				sb.WriteByte(' ')
			}
			sb.WriteByte('\n')
		}
		p := filepath.Join(dir, fmt.Sprintf("d%03d", f/100), fmt.Sprintf("f%05d.txt", f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return words
}

// BenchmarkIndexFiles indexes 10,000 small files (20 lines each, one
// chunk each) into a new index.
func BenchmarkIndexFiles(b *testing.B) {
	ws := b.TempDir()
	writeCorpus(b, ws, 10000, 20)
	b.ResetTimer()
	for b.Loop() {
		ix, _, err := search.Open(search.Config{Dir: b.TempDir(), Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		st, err := ix.Update(context.Background())
		if err != nil || st.Files != 10000 {
			b.Fatalf("update: %v, %d files", err, st.Files)
		}
		ix.Close()
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkUpdateUnchanged brings an index of 10,000 files up to date
// when nothing changed: a walk and a stat per file, nothing read.
func BenchmarkUpdateUnchanged(b *testing.B) {
	ws := b.TempDir()
	writeCorpus(b, ws, 10000, 20)
	ix, _, err := search.Open(search.Config{Dir: b.TempDir(), Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ix.Update(context.Background())
	b.ResetTimer()
	for b.Loop() {
		if st, err := ix.Update(context.Background()); err != nil || st.Added != 0 {
			b.Fatalf("update: %v, %d added", err, st.Added)
		}
	}
}

// BenchmarkQuery searches indexes of 10,000 and 100,000 chunks (40-line
// chunks of ten words a line) for two-word queries, one common and one
// rarer word, and reports the heap held by an open index and its size
// on disk.
func BenchmarkQuery(b *testing.B) {
	for _, chunks := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			if chunks > 10000 && testing.Short() {
				b.Skip("-short")
			}
			ws := b.TempDir()
			// 400 lines a file, cut with no overlap and no byte limit: 10 chunks.
			words := writeCorpus(b, ws, chunks/10, 400)
			ix, _, err := search.Open(search.Config{Dir: b.TempDir(), Workspace: ws, Overlap: -1, ChunkBytes: 8000})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			st, err := ix.Update(context.Background())
			if err != nil || st.Chunks != chunks {
				b.Fatalf("update: %v, %d chunks, want %d", err, st.Chunks, chunks)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			// common: one of the 64 commonest words (in most chunks, as a
			// stop word would be) and a middling one; rare: two words of
			// rank 1,000 to 3,000.
			common, rare := make([]string, 64), make([]string, 64)
			for i := range common {
				common[i] = words[i] + " " + words[100+i*37]
				rare[i] = words[1000+i*13] + " " + words[2000+i*17]
			}
			ctx := context.Background()
			for _, q := range []struct {
				name    string
				queries []string
			}{{"common", common}, {"rare", rare}} {
				b.Run(q.name, func(b *testing.B) {
					i := 0
					for b.Loop() {
						if _, err := ix.Search(ctx, q.queries[i%len(q.queries)], search.ScopeAll, 10); err != nil {
							b.Fatal(err)
						}
						i++
					}
				})
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.Logf("%d chunks: heap in use %.1f MiB with the index open and searched (%.1f before searching), %.1f MiB on disk",
				chunks, float64(after.HeapInuse)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(st.Bytes)/(1<<20))
		})
	}
}

// hashEmbedder makes 384-dimension vectors (the size of small embedding
// models) from a text's words, in-process: what is measured is the store
// and the search, not a model.
type hashEmbedder struct{}

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 384)
		for _, w := range strings.Fields(t) {
			h := uint32(2166136261)
			for j := 0; j < len(w); j++ {
				h = (h ^ uint32(w[j])) * 16777619
			}
			v[h%384]++
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkVectorQuery searches with vectors (an exact cosine scan of
// every vector in scope, fused with BM25) at 10,000 and 100,000 chunks.
func BenchmarkVectorQuery(b *testing.B) {
	for _, chunks := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			if chunks > 10000 && testing.Short() {
				b.Skip("-short")
			}
			ws := b.TempDir()
			words := writeCorpus(b, ws, chunks/10, 400)
			ix, _, err := search.Open(search.Config{Dir: b.TempDir(), Workspace: ws, Overlap: -1, ChunkBytes: 8000,
				Embedder: hashEmbedder{}, EmbeddingModel: "hash-384"})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			st, err := ix.Update(context.Background())
			if err != nil || st.Vectors != chunks {
				b.Fatalf("update: %v, %d vectors, want %d", err, st.Vectors, chunks)
			}
			ctx := context.Background()
			i := 0
			b.ResetTimer()
			for b.Loop() {
				q := words[1000+i%64*13] + " " + words[2000+i%64*17]
				if _, err := ix.Search(ctx, q, search.ScopeAll, 10); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
