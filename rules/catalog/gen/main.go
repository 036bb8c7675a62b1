// Command gen writes the JSON form of each YAML catalog of rules/catalog
// into rules/catalog/json (go generate ./rules/catalog). Tests fail when a
// JSON file is not what gen writes from its YAML now.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coroner-dev/coroner/rules/catalog/jsonform"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no *.yaml here: run it in rules/catalog (go generate ./rules/catalog)")
	}
	if err := os.MkdirAll("json", 0o755); err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		out, err := jsonform.FromYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join("json", strings.TrimSuffix(f, ".yaml")+".json"), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
