package calibrate

import (
	"crypto/sha1"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing/fstest"

	"github.com/goccy/go-yaml"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// errorLine is one item of a fixtures/errorlines file: real error lines of
// one upstream thread and the cause (and phase) the thread gives them.
type errorLine struct {
	URL       string   `yaml:"url"`
	Engine    string   `yaml:"engine"`
	Lines     []string `yaml:"lines"`
	Phase     string   `yaml:"phase"`
	Category  string   `yaml:"category"`
	Also      []string `yaml:"also"`
	Certainty string   `yaml:"certainty"`
}

// anyOutcome accepts every outcome: a line's outcome is not graded.
var anyOutcome = []rules.Outcome{rules.OutcomeReady, rules.OutcomeInProgress, rules.OutcomeHung,
	rules.OutcomeCrashed, rules.OutcomeSlow, rules.OutcomeUnknown}

// Split names the part of the error-line corpus a thread belongs to: a
// third of the threads, by a hash of the URL, is the test part, read only
// to be scored; the rest is the development part.
func Split(url string) string {
	h := sha1.Sum([]byte(url))
	if new(big.Int).Mod(new(big.Int).SetBytes(h[:]), big.NewInt(3)).Sign() == 0 {
		return "test"
	}
	return "dev"
}

// ErrorLines reads a file of the error-line corpus: each item is a case
// whose evidence is its lines alone, as a server.log, graded on its cause
// (and its phase where the thread says it); the outcome is not graded, as
// a line says what failed, not whether the run ended there. Set is the
// item's Split.
func ErrorLines(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var items []errorLine
	if err := yaml.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Case, 0, len(items))
	for i, it := range items {
		if it.URL == "" || len(it.Lines) == 0 || !rules.Category(it.Category).Valid() {
			return nil, fmt.Errorf("%s: item %d (%s): a url, lines and a category of the taxonomy are needed", path, i+1, it.URL)
		}
		c := Case{Set: Split(it.URL), Name: it.URL, Outcomes: anyOutcome}
		c.Causes = append(c.Causes, rules.Category(it.Category))
		for _, a := range it.Also {
			c.Causes = append(c.Causes, rules.Category(a))
		}
		if it.Phase != "" {
			c.Phases = []rules.Phase{rules.Phase(it.Phase)}
		}
		log := []byte(strings.Join(it.Lines, "\n") + "\n")
		c.facts = func(w facts.LineWatch) (*facts.Facts, error) {
			return parser.ParseFS(fstest.MapFS{"server.log": {Data: log}}, parser.Options{Watch: w})
		}
		out = append(out, c)
	}
	return out, nil
}
