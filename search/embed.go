package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentty/agentty/engine"
)

// Embedder turns texts into vectors, one per text, in order. It must be
// safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// OpenAIConfig says how to reach an OpenAI-compatible embeddings endpoint.
type OpenAIConfig struct {
	BaseURL, APIKey, Model string
	// Batch is how many texts one request carries (default 64).
	Batch int
	// Retry is the backoff between attempts (engine.Retry's defaults: 5
	// attempts from 500 ms).
	Retry engine.Retry
	// HTTPClient is the client to use (default http.DefaultClient with a
	// two-minute timeout per request).
	HTTPClient *http.Client
}

// OpenAIEmbedder calls the embeddings endpoint of an OpenAI-compatible
// server through go-openai: texts in batches, each request retried on
// 408, 409, 429, 5xx and broken connections.
type OpenAIEmbedder struct {
	cfg    OpenAIConfig
	client *openai.Client
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// NewOpenAIEmbedder returns an embedder for cfg.
func NewOpenAIEmbedder(cfg OpenAIConfig) *OpenAIEmbedder {
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = cfg.BaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	oc.HTTPClient = hc
	return &OpenAIEmbedder{cfg: cfg, client: openai.NewClientWithConfig(oc)}
}

// Embed implements Embedder.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.Batch {
		batch := texts[start:min(start+e.cfg.Batch, len(texts))]
		vs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	attempts := e.cfg.Retry.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	for n := 1; ; n++ {
		vs, err := e.call(ctx, texts)
		if err == nil || n >= attempts || !engine.IsRetryable(err) {
			if err != nil {
				return nil, fmt.Errorf("search: embeddings (%s, %d attempts): %w", e.cfg.Model, n, err)
			}
			return vs, nil
		}
		var re *engine.Error
		var after time.Duration
		if errors.As(err, &re) {
			after = re.RetryAfter
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(e.cfg.Retry.Delay(n, after)):
		}
	}
}

func (e *OpenAIEmbedder) call(ctx context.Context, texts []string) ([][]float32, error) {
	res, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(e.cfg.Model)})
	if err != nil {
		return nil, classify(err)
	}
	if len(res.Data) != len(texts) {
		return nil, fmt.Errorf("%d vectors for %d texts", len(res.Data), len(texts))
	}
	vs := make([][]float32, len(texts))
	for i, d := range res.Data {
		idx := d.Index
		if idx < 0 || idx >= len(vs) || vs[idx] != nil {
			idx = i // a server that numbers them oddly: take them in order
		}
		vs[idx] = d.Embedding
	}
	return vs, nil
}

// classify marks HTTP statuses worth retrying as engine.Errors.
func classify(err error) error {
	status := 0
	var ae *openai.APIError
	var re *openai.RequestError
	switch {
	case errors.As(err, &ae):
		status = ae.HTTPStatusCode
	case errors.As(err, &re):
		status = re.HTTPStatusCode
	}
	if status == 0 {
		return err
	}
	retry := status == 408 || status == 409 || status == 429 || status >= 500
	return &engine.Error{Err: err, Retryable: retry, Status: status}
}
