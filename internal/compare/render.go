package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/facts"
)

// JSON writes the diff as indented JSON.
func JSON(w io.Writer, d *Diff) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	// Log lines hold <, > and & often; \u003c only hurts a human reader.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return err
	}
	_, err := w.Write(escape.JSON(b.Bytes()))
	return err
}

// Markdown writes the diff for people: a headline, then throughput, phases,
// the first divergence, settings, environment, versions and GPUs.
func Markdown(w io.Writer, d *Diff) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("# coroner diff\n\n")
	p("A is %s, B is %s.\n\n", code(d.A.Path), code(d.B.Path))
	if h := headline(d); h != "" {
		p("**%s**\n\n", h)
	}
	p("| | A | B |\n|---|---|---|\n")
	p("| engine | %s | %s |\n", engineWords(d.A), engineWords(d.B))
	if d.A.Model != "" || d.B.Model != "" {
		p("| model | %s | %s |\n", code(d.A.Model), code(d.B.Model))
	}
	if d.GPUs.A != "" || d.GPUs.B != "" {
		p("| GPUs | %s | %s |\n", orDash(cell(d.GPUs.A)), orDash(cell(d.GPUs.B)))
	}
	p("| verdict | %s | %s |\n\n", cell(d.A.Verdict), cell(d.B.Verdict))

	p("## Throughput and acceptance\n\n")
	if len(d.Throughput.Rows) == 0 {
		p("Neither run logged generation throughput (no stat lines with work).\n\n")
	} else {
		p("From the engine process with the most stat lines: A %s, B %s. Figures per batch size come from steady stat lines only (no prefill, idle gap or batch change since the previous line).\n\n",
			seriesWords(d.Throughput.A), seriesWords(d.Throughput.B))
		p("| figure | A | B | B vs A |\n|---|---|---|---|\n")
		for _, r := range d.Throughput.Rows {
			p("| %s | %s | %s | %s |\n", r.Metric, figure(r.A, r.Unit, r.ALines, r.ARef), figure(r.B, r.Unit, r.BLines, r.BRef), change(r.Change))
		}
		p("\n")
	}

	p("## Phases\n\n")
	if len(d.Phases) == 0 {
		p("Neither run has a timeline.\n\n")
	} else {
		p("A phase lasts from the first process entering it until the run entered its next one; the last phase a run reached is open until its latest evidence.\n\n")
		p("| phase | A | B | B − A |\n|---|---|---|---|\n")
		for _, r := range d.Phases {
			p("| %s | %s | %s | %s |\n", r.Phase, span(r.A), span(r.B), spanDelta(r.A, r.B))
		}
		p("\n")
	}

	p("## First divergence\n\n")
	switch dv := d.Divergence; {
	case dv == nil && d.Milestones == 0:
		p("Neither run logged milestones to compare.\n\n")
	case dv == nil:
		p("None: both runs logged the same %d milestones in the same order.\n\n", d.Milestones)
	default:
		what := "milestones"
		if dv.Basis == "phase" {
			what = "phases (the engines differ, so the phases they entered are compared, not their log lines)"
		}
		after := "at the first one"
		if dv.After != nil {
			after = fmt.Sprintf("at number %d, after %s (%s)", dv.Index+1, code(dv.After.Kind), refWords(dv.After.Ref))
		}
		p("Comparing %s, the runs part ways %s:\n\n", what, after)
		p("- A: %s\n- B: %s\n\n", milestoneWords(dv.A), milestoneWords(dv.B))
	}

	p("## Settings that differ\n\n")
	if len(d.Settings) == 0 {
		p("None.\n\n")
	} else {
		p("| setting | A | B | difference |\n|---|---|---|---|\n")
		for _, r := range d.Settings {
			p("| %s | %s | %s | %s |\n", settingKey(r), settingWords(r.A), settingWords(r.B), kindWords(r.Kind))
		}
		p("\n")
	}
	p("%d other setting(s) have the same value in both runs. A setting only one run reports is listed only when the user set it.\n\n", d.SettingsSame)

	p("## Environment variables that differ\n\n")
	p("Variables named NCCL_*, CUDA_*, VLLM_*, SGLANG_*, PYTORCH_*, TORCH_*, from the launch command, env dumps and env reports.\n\n")
	if len(d.Env) == 0 {
		p("None; %d are the same.\n\n", d.EnvSame)
	} else {
		p("| variable | A | B |\n|---|---|---|\n")
		for _, r := range d.Env {
			p("| %s | %s | %s |\n", code(r.Name), envWords(r.A), envWords(r.B))
		}
		p("\n%d other variable(s) are the same in both runs.\n\n", d.EnvSame)
	}

	p("## Versions\n\n")
	if len(d.Versions) == 0 {
		p("Neither run states versions (no engine version line, env report or nvidia-smi).\n\n")
	} else {
		p("| component | A | B | |\n|---|---|---|---|\n")
		for _, r := range d.Versions {
			mark := ""
			if r.Differs {
				mark = "differs"
			}
			p("| %s | %s | %s | %s |\n", cell(r.Component), versionWords(r.A, r.ARef), versionWords(r.B, r.BRef), mark)
		}
		p("\n")
	}

	p("## GPUs\n\n")
	switch {
	case d.GPUs.A == "" && d.GPUs.B == "":
		p("Neither run describes its GPUs.\n")
	case !d.GPUs.Differs:
		p("The same in both runs: %s (A %s, B %s).\n", cell(d.GPUs.A), refWords(d.GPUs.ARef), refWords(d.GPUs.BRef))
	default:
		p("- A: %s%s\n- B: %s%s\n", orDash(cell(d.GPUs.A)), refSuffix(d.GPUs.ARef), orDash(cell(d.GPUs.B)), refSuffix(d.GPUs.BRef))
	}
	return bw.Flush()
}

// headline states the throughput change and what else differs.
func headline(d *Diff) string {
	var parts []string
	for _, r := range d.Throughput.Rows {
		if r.Metric == d.Throughput.Rows[0].Metric && r.A != nil && r.B != nil {
			parts = append(parts, fmt.Sprintf("%s: %s (A) against %s (B)%s.", capitalize(strings.SplitN(r.Metric, " (", 2)[0]),
				num(*r.A, r.Unit), num(*r.B, r.Unit), changeSuffix(r.Change)))
		}
	}
	var n []string
	count := func(k int, one, many string) {
		if k == 1 {
			n = append(n, "1 "+one)
		} else if k > 1 {
			n = append(n, fmt.Sprintf("%d %s", k, many))
		}
	}
	count(len(d.Settings), "setting", "settings")
	count(len(d.Env), "environment variable", "environment variables")
	diffVersions := 0
	for _, v := range d.Versions {
		if v.Differs {
			diffVersions++
		}
	}
	count(diffVersions, "version", "versions")
	switch {
	case len(n) == 1 && strings.HasPrefix(n[0], "1 "):
		parts = append(parts, n[0]+" differs.")
	case len(n) > 0:
		parts = append(parts, strings.Join(n, ", ")+" differ.")
	}
	if d.A.Outcome != d.B.Outcome {
		parts = append(parts, fmt.Sprintf("A is %s, B is %s.", d.A.Outcome, d.B.Outcome))
	}
	return strings.Join(parts, " ")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// engineName spells an engine as its project does.
func engineName(e string) string {
	switch e {
	case "sglang":
		return "SGLang"
	case "vllm":
		return "vLLM"
	}
	return e
}

func engineWords(s Summary) string {
	e := engineName(s.Engine)
	if s.Version != "" {
		e += " " + s.Version
	}
	return cell(e)
}

func seriesWords(r *RunRate) string {
	if r == nil {
		return "none"
	}
	s := fmt.Sprintf("%s (%d stat lines", cell(r.Series), r.Lines)
	if r.First != nil && r.Last != nil {
		s += fmt.Sprintf(", %s to line %d", refWords(r.First), r.Last.Line)
	}
	if r.Approximate {
		s += "; approximate: too many lines to keep one by one"
	}
	return s + ")"
}

func figure(v *float64, unit string, lines int, ref *Ref) string {
	if v == nil {
		return "-"
	}
	s := num(*v, unit)
	var extra []string
	switch {
	case lines == 1:
		extra = append(extra, "1 line")
	case lines > 1:
		extra = append(extra, fmt.Sprintf("%d lines", lines))
	}
	if ref != nil {
		extra = append(extra, refWords(ref))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func num(v float64, unit string) string {
	switch unit {
	case "tok/s":
		if v >= 1000 {
			return fmt.Sprintf("%.0f tok/s", v)
		}
		return fmt.Sprintf("%.1f tok/s", v)
	case "%":
		return fmt.Sprintf("%.0f%%", v)
	case "tokens":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

func change(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *c)
}

func changeSuffix(c *float64) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(", %+.1f%%", *c)
}

func span(s *PhaseSpan) string {
	if s == nil {
		return "-"
	}
	out := duration(s.Seconds)
	if s.Open {
		out += " (open)"
	}
	return out
}

func spanDelta(a, b *PhaseSpan) string {
	if a == nil || b == nil || a.Open || b.Open {
		return "-"
	}
	d := b.Seconds - a.Seconds
	if d == 0 {
		return "0 s"
	}
	sign := "+"
	if d < 0 {
		sign = "−"
	}
	return sign + duration(math.Abs(d))
}

// duration renders 9.0 s, 42 s, 10 min, 2.4 h, as coroner analyze does
// (facts.Seconds): one phase reads the same in both.
func duration(s float64) string { return facts.Seconds(s) }

func milestoneWords(m *Milestone) string {
	if m == nil {
		return "nothing: no further milestone in its logs"
	}
	s := code(m.Kind)
	if m.Ref != nil {
		s += " at " + refWords(m.Ref)
	}
	if m.Text != "" {
		s += ": " + code(m.Text)
	}
	return s
}

func settingKey(r SettingRow) string {
	k := code(r.Key)
	var own []string
	for _, v := range []*SettingValue{r.A, r.B} {
		if v != nil && v.Key != r.Key && !slices.Contains(own, v.Key) {
			own = append(own, v.Key)
		}
	}
	if len(own) > 0 {
		k += " (" + code(strings.Join(own, ", ")) + ")"
	}
	return k
}

func settingWords(v *SettingValue) string {
	if v == nil {
		return "not set"
	}
	val := code(v.Value)
	if isUnset(v.Value) {
		val = "unset"
		if v.Value != "" {
			val += " " + code(v.Value)
		}
	}
	var from string
	switch {
	case v.SetAt != nil:
		from = fmt.Sprintf("set by the user, %s; %s %s", refWords(v.SetAt), fromWords(v.From), refWords(v.Ref))
	case v.Explicit:
		from = fmt.Sprintf("set by the user, %s %s", fromWords(v.From), refWords(v.Ref))
	case v.From == "server-args":
		from = fmt.Sprintf("engine default, %s %s", fromWords(v.From), refWords(v.Ref))
	default:
		from = fmt.Sprintf("%s %s", fromWords(v.From), refWords(v.Ref))
	}
	return val + " (" + from + ")"
}

// fromWords names where a setting was read.
func fromWords(from string) string {
	switch from {
	case "server-args":
		return "ServerArgs"
	case "engine-config":
		return "engine config"
	case "non-default-args":
		return "non-default args"
	case "cmdline":
		return "launch command"
	}
	return cell(from)
}

func kindWords(kind string) string {
	switch kind {
	case "differs":
		return "value"
	case "only-a":
		return "set in A only"
	case "only-b":
		return "set in B only"
	case "explicit":
		return "same value, set by the user in one run only"
	}
	return kind
}

func envWords(v *EnvValue) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprintf("%s (%s at %s)", code(v.Value), cell(v.From), refWords(v.Ref))
}

func versionWords(v string, ref *Ref) string {
	if v == "" {
		return "-"
	}
	return code(v) + refSuffix(ref)
}

func refWords(r *Ref) string {
	if r == nil {
		return "unknown place"
	}
	if r.Line <= 0 {
		return cell(r.File)
	}
	return fmt.Sprintf("%s:%d", cell(r.File), r.Line)
}

func refSuffix(r *Ref) string {
	if r == nil {
		return ""
	}
	return " (" + refWords(r) + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell makes text from a bundle safe in a markdown paragraph or table
// cell: no raw HTML (a GPU named <svg onload=...>), no line or table
// breaks, no terminal escapes. The reports escape it the same way.
func cell(s string) string { return escape.Markdown(s) }

// code renders text from a bundle as inline code, "-" when empty.
func code(s string) string {
	if s == "" {
		return "-"
	}
	return escape.MarkdownCode(s)
}
