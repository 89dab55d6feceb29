package traces

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// Traces to a file: each export is one line of OTLP JSON (an
// ExportTraceServiceRequest, as the OpenTelemetry Collector's file
// exporter writes and its otlpjsonfile receiver reads back). The spans are
// made by the OTLP exporter itself (otlptrace.New with a client of ours),
// so a file holds what a collector would have been sent.

// fileClient is an otlptrace.Client that writes to path.
type fileClient struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// fileExporter is an exporter of OTLP JSON lines to path, which is made
// anew (0600); a path that is there and is not a regular file (a FIFO, a
// device) is refused rather than opened.
func fileExporter(ctx context.Context, path string) (*otlptrace.Exporter, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("--trace-file %s: not a regular file", path)
	}
	return otlptrace.New(ctx, &fileClient{path: path})
}

func (c *fileClient) Start(context.Context) error {
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("--trace-file: %w", err)
	}
	c.mu.Lock()
	c.f = f
	c.mu.Unlock()
	return nil
}

func (c *fileClient) Stop(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

func (c *fileClient) UploadTraces(_ context.Context, spans []*tracepb.ResourceSpans) error {
	b, err := protojson.MarshalOptions{}.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: spans})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return errors.New("--trace-file: the file is closed")
	}
	_, err = c.f.Write(append(b, '\n'))
	return err
}
