// Command redactgen writes the inputs of bench/redact.sh: text built to be
// slow to redact (internal/redact/redacttest: long runs after api_key,
// Authorization:, Bearer, password and X-API-Key, those words over and
// over, URLs and token prefixes), each about -size bytes, and the seed's
// SGLang log repeated to the same size, the ordinary text to compare with.
//
//	go run ./bench/redactgen -out bench/out/redact -size 4MB
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/internal/redact/redacttest"
)

func main() {
	out := flag.String("out", "bench/out/redact", "output directory")
	size := flag.String("size", "4MB", "size of each input (e.g. 1MB, 4MB)")
	flag.Parse()
	n, err := parseMB(*size)
	if err != nil {
		log.Fatalf("-size: %v", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, in := range redacttest.AdversarialInputs(n) {
		write(filepath.Join(*out, in.Name+".log"), in.Data)
	}
	one, err := os.ReadFile("fixtures/seed/flashinfer-sm120-hang/server.log")
	if err != nil {
		log.Fatalf("run from the repository root: %v", err)
	}
	write(filepath.Join(*out, "ordinary-sglang.log"), bytes.Repeat(one, max(1, n/len(one))))
}

func write(p string, data []byte) {
	if err := os.WriteFile(p, data, 0o644); err != nil {
		log.Fatal(err)
	}
}

// parseMB reads 4MB or 1MiB as bytes (both are 2^20 here: the inputs
// only need a size, not a unit's exact value).
func parseMB(s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := 1
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	}
	v, err := strconv.Atoi(t)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a size like 4MB", s)
	}
	return v * mult, nil
}
