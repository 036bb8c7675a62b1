// Package labels maps a verdict to a repository's own issue labels
// through a small table that the repository's maintainers edit (YAML):
// the run's outcome, the most likely cause's category, the phase the run
// stopped in and the GPUs' vendor or architecture, each to the labels that
// mean it in that repository. An issue with nothing diagnosable gets the
// table's "undiagnosed" labels. Nothing maps to a label unless the table
// says so: a label is a claim a maintainer made, not one coroner invents.
//
// Tables for sgl-project/sglang and vllm-project/vllm are built in
// (Builtin), with only labels those repositories use.
package labels

import (
	"embed"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/coroner-dev/coroner/rules"
)

// Table is a repository's mapping of verdicts to labels.
type Table struct {
	// Repository is the owner/name the table is for (documentation only).
	Repository string `yaml:"repository"`
	// MinConfidence is the least confidence of the most likely cause for
	// its category's labels (default 0.5): a weak guess adds none.
	MinConfidence *float64            `yaml:"min_confidence"`
	Outcome       map[string][]string `yaml:"outcome"`
	Cause         map[string][]string `yaml:"cause"`
	Phase         map[string][]string `yaml:"phase"`
	// GPU keys are a vendor (nvidia, amd) or an architecture (hopper,
	// blackwell, ampere, cdna3, ...), lower case.
	GPU map[string][]string `yaml:"gpu"`
	// Undiagnosed are the labels of an issue with nothing diagnosable.
	Undiagnosed []string `yaml:"undiagnosed"`
}

//go:embed *.yaml
var builtin embed.FS

// Names lists the built-in tables.
func Names() []string {
	ents, _ := builtin.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// ForRepository names the built-in table of a repository ("owner/name"),
// or "" when none is built in.
func ForRepository(repo string) string {
	switch strings.ToLower(repo) {
	case "sgl-project/sglang":
		return "sglang"
	case "vllm-project/vllm":
		return "vllm"
	}
	return ""
}

// Load reads a table: a built-in one by name (sglang, vllm) or a YAML
// file. Errors name the file, line and column.
func Load(nameOrFile string) (*Table, error) {
	if slices.Contains(Names(), nameOrFile) {
		data, err := builtin.ReadFile(nameOrFile + ".yaml")
		if err != nil {
			return nil, err
		}
		return Parse(nameOrFile+".yaml", data)
	}
	data, err := os.ReadFile(nameOrFile)
	if err != nil {
		return nil, fmt.Errorf("label table %s: %w (the built-in tables: %s)", nameOrFile, err, strings.Join(Names(), ", "))
	}
	return Parse(nameOrFile, data)
}

var labelRe = regexp.MustCompile(`^[^\x00-\x1f\x7f,]{1,50}$`)

// Parse reads a table from YAML; file names it in errors. Keys outside the
// taxonomy (the vocabulary of the README) and labels GitHub would refuse are errors.
func Parse(file string, data []byte) (*Table, error) {
	var t Table
	if err := yaml.UnmarshalWithOptions(data, &t, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s: %s", file, yaml.FormatError(err, false, false))
	}
	var errs []string
	check := func(section, noun string, m map[string][]string, valid func(string) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !valid(k) {
				errs = append(errs, fmt.Sprintf("%s: %q is not %s", section, k, noun))
			}
			for _, l := range m[k] {
				if !labelRe.MatchString(l) || strings.TrimSpace(l) != l {
					errs = append(errs, fmt.Sprintf("%s.%s: %q is not a label GitHub accepts (1-50 characters, no commas or control characters, no spaces around)", section, k, l))
				}
			}
		}
	}
	check("outcome", "an outcome of the taxonomy (the vocabulary of the README)", t.Outcome, func(k string) bool { return slices.Contains(outcomes, rules.Outcome(k)) })
	check("cause", "a cause category of the taxonomy (the vocabulary of the README)", t.Cause, func(k string) bool { return rules.Category(k).Valid() })
	check("phase", "a phase of the taxonomy (the vocabulary of the README)", t.Phase, func(k string) bool { return rules.Phase(k).Order() >= 0 })
	check("gpu", "a GPU vendor or architecture in lower case (nvidia, amd, hopper, blackwell)", t.GPU, gpuKeyRe.MatchString)
	for _, l := range t.Undiagnosed {
		if !labelRe.MatchString(l) {
			errs = append(errs, fmt.Sprintf("undiagnosed: %q is not a label GitHub accepts", l))
		}
	}
	if t.MinConfidence != nil && (*t.MinConfidence < 0 || *t.MinConfidence > 1) {
		errs = append(errs, "min_confidence: must be between 0 and 1")
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", file, strings.Join(errs, "; "))
	}
	return &t, nil
}

var outcomes = []rules.Outcome{rules.OutcomeReady, rules.OutcomeInProgress, rules.OutcomeHung, rules.OutcomeCrashed,
	rules.OutcomeSlow, rules.OutcomeUnknown}

// Input is what a table maps: the verdict (causes ranked, most likely
// first) and the GPUs of the run.
type Input struct {
	Outcome, Phase string
	Causes         []Cause
	GPUs           []GPU
}

// Cause is one ranked cause of the verdict.
type Cause struct {
	Category   string
	Confidence float64
}

// GPU is one kind of GPU the run had: its model name and architecture.
type GPU struct {
	Model, Arch string
}

// Diagnosable reports whether a verdict says anything about the run: an
// outcome other than unknown, or a cause. An issue without either gets no
// verdict labels, only the table's undiagnosed ones.
func Diagnosable(in Input) bool {
	return in.Outcome != "" && in.Outcome != string(rules.OutcomeUnknown) || len(in.Causes) > 0
}

// For returns the labels the table gives a verdict, sorted, each once.
func (t *Table) For(in Input) []string {
	var out []string
	if !Diagnosable(in) {
		out = append(out, t.Undiagnosed...)
		return tidy(out)
	}
	out = append(out, t.Outcome[in.Outcome]...)
	out = append(out, t.Phase[in.Phase]...)
	min := 0.5
	if t.MinConfidence != nil {
		min = *t.MinConfidence
	}
	if len(in.Causes) > 0 && in.Causes[0].Confidence >= min {
		out = append(out, t.Cause[in.Causes[0].Category]...)
	}
	for _, k := range gpuKeys(in.GPUs) {
		out = append(out, t.GPU[k]...)
	}
	return tidy(out)
}

func tidy(v []string) []string {
	sort.Strings(v)
	return slices.Compact(v)
}

// gpuKeys are the vendors and architectures of the GPUs.
func gpuKeys(gpus []GPU) []string {
	var keys []string
	for _, g := range gpus {
		m := strings.ToLower(g.Model)
		switch {
		case strings.Contains(m, "amd") || strings.Contains(m, "instinct") || strings.Contains(m, "radeon") || amdRe.MatchString(m):
			keys = append(keys, "amd")
		case m != "":
			keys = append(keys, "nvidia")
		}
		if a := strings.ToLower(strings.TrimSpace(g.Arch)); a != "" {
			keys = append(keys, strings.ReplaceAll(a, " ", "-"))
		}
	}
	return tidy(keys)
}

var (
	amdRe    = regexp.MustCompile(`\bmi\d{3}`)
	gpuKeyRe = regexp.MustCompile(`^[a-z0-9-]+$`)
)
