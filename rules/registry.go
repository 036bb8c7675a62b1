package rules

import (
	"errors"
	"fmt"
	"sort"
)

// registry holds the built-in rules. It is the package's only global: each
// rule file registers its rule from init, the way database/sql drivers do.
var registry []*Rule

// Register adds a built-in rule. A malformed or duplicate rule is caught by
// CheckRegistry, which the tests and `coroner rules list` run.
func Register(r *Rule) {
	r.Builtin = true
	registry = append(registry, r)
}

// Registered returns the built-in rules sorted by ID.
func Registered() []*Rule {
	out := append([]*Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the rule with the given ID among rs, or nil.
func Lookup(rs []*Rule, id string) *Rule {
	for _, r := range rs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// CheckRegistry validates every rule of rs and rejects duplicate IDs.
func CheckRegistry(rs []*Rule) error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
		}
		if seen[r.ID] {
			errs = append(errs, fmt.Errorf("rule %s: registered twice", r.ID))
		}
		seen[r.ID] = true
	}
	return errors.Join(errs...)
}
