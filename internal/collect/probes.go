package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/parser/probe"
)

// Endpoints are the health and info endpoints of SGLang and vLLM. An
// engine answers 404 to the ones it lacks, which is evidence too.
var Endpoints = []struct {
	Path    string
	Timeout time.Duration
}{
	{"/health", 5 * time.Second},
	// /health_generate runs one decode step: a hung scheduler shows here.
	{"/health_generate", 10 * time.Second},
	{"/v1/models", 5 * time.Second},
	{"/get_server_info", 5 * time.Second},
	{"/metrics", 5 * time.Second},
}

// probeAll probes every endpoint of base at once and returns the records
// as JSON lines (the parser/probe record format), in endpoint order.
func probeAll(ctx context.Context, base string, now func() time.Time) []byte {
	recs := make([]probe.Record, len(Endpoints))
	var wg sync.WaitGroup
	for i, ep := range Endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = probeOne(ctx, base, ep.Path, ep.Timeout, now)
		}()
	}
	wg.Wait()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		_ = enc.Encode(r)
	}
	return b.Bytes()
}

func probeOne(ctx context.Context, base, path string, timeout time.Duration, now func() time.Time) probe.Record {
	u := strings.TrimRight(base, "/") + path
	rec := probe.Record{URL: u, Endpoint: path}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	rec.At = now().UTC()
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	client := &http.Client{
		// A proxy between the collector and a local server only adds doubt.
		Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: timeout}).DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		rec.LatencyMS = ms(time.Since(start))
		rec.Error = probeError(err, timeout)
		return rec
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, probe.MaxBody))
	rec.LatencyMS = ms(time.Since(start))
	rec.Status = resp.StatusCode
	rec.Body = strings.ToValidUTF8(string(body), "\uFFFD")
	if rerr != nil {
		rec.Error = probeError(rerr, timeout)
	}
	return rec
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// probeError says why a probe got no answer, the way curl users read it.
func probeError(err error, timeout time.Duration) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout") {
		return "timed out after " + timeout.String()
	}
	return err.Error()
}
