package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(specDecodeRule) }

var specDecodeRule = &Rule{
	ID:       "spec-decode-acceptance",
	Title:    "the speculative-decoding drafter is almost never right",
	Severity: SeverityWarning,
	Category: CatSpecDecode,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Speculative decoding pays off only when the target model accepts the
drafter's tokens. Both engines print how often it does: SGLang in its decode
lines ("accept len: 1.25, accept rate: 0.25"), vLLM in "SpecDecoding
metrics: Mean acceptance length: X, ..., Avg Draft acceptance rate: Y%".

Accept length is the tokens emitted per verify step, the target's own token
included: 1.0 means no drafted token was ever accepted. Acceptance rate is
the share of drafted tokens accepted (SGLang: (accept length - 1) / drafted
tokens per step). The rule reads the mean over at least three stat lines:

- accept length under 1.3 (fewer than 0.3 accepted tokens per step): the
  drafter is useless, and the drafting and verification it costs make the
  server slower than without it;
- or an acceptance rate under 30% while the accept length stays under 2.0 and
  the drafter proposes at most 4 tokens per step (or an unknown number). A
  drafter proposing many tokens a step (DFlash blocks of 16) is expected to
  see its later positions rejected, so a low rate alone says little there.

The usual causes: a drafter trained on hidden states extracted from another
engine or another revision of the target (the hidden states it learned to
read differ from the ones it gets: layer choice, norm placement, a
re-quantized checkpoint), a drafter that does not belong to this target
(other size, base vs instruct, other tokenizer or vocabulary), and
speculative settings that do not fit the drafter (EAGLE vs EAGLE3, the
number of steps and draft tokens, a missing token map, a chat template or
reasoning mode other than the training data's).`,
	References: []string{
		"https://arxiv.org/abs/2503.01840",
		"https://docs.vllm.ai/en/latest/features/spec_decode.html",
	},
	Run: runSpecDecode,
}

func runSpecDecode(p *Pass) {
	for _, s := range RuntimeOf(p.Index).Series {
		a := s.Accept
		if a == nil || a.N < 3 {
			continue
		}
		strong := a.Len > 0 && a.Len < 1.3
		weak := a.Rate >= 0 && a.Rate < 0.3 && (a.Len == 0 || a.Len < 2) && a.DraftTokens <= 4
		if !strong && !weak {
			continue
		}
		conf := 0.5
		if strong {
			conf = 0.8
		}
		var what []string
		if a.Len > 0 {
			what = append(what, fmt.Sprintf("a mean accept length of %.2f tokens per verify step (1.0 = nothing accepted; %.2f drafted tokens accepted per step)", a.Len, a.Len-1))
		}
		if a.Rate >= 0 {
			what = append(what, fmt.Sprintf("%.0f%% of drafted tokens accepted", a.Rate*100))
		}
		drafter := "The drafter"
		if a.Algorithm != "" || a.Draft != "" {
			drafter = "The " + strings.TrimSpace(a.Algorithm+" drafter "+a.Draft)
		}
		ev := []Evidence{
			{Src: a.First, Text: "first speculative-decoding line: " + a.FirstText},
			{Src: a.Last, Text: "last speculative-decoding line: " + a.LastText},
		}
		for _, st := range a.Settings {
			ev = append(ev, Evidence{Src: st.Src, Text: fmt.Sprintf("%s = %s", st.Key, st.Value)})
		}
		speed := ""
		if s.Active > 0 {
			speed = fmt.Sprintf(" (%s)", figures(s))
		}
		p.Report(Finding{
			Message: fmt.Sprintf("%s of %s %s shows %s over %d stat lines: the target rejects almost everything it drafts, so speculative decoding only adds drafting and verification work%s. "+
				"Known causes: a drafter trained on hidden states extracted from another engine or another revision of the target model; a drafter that does not match this target (size, base vs instruct, tokenizer); "+
				"speculative settings that do not fit the drafter (algorithm EAGLE vs EAGLE3, steps, draft tokens, token map).",
				drafter, engineName(s.Engine), s.Name, strings.Join(what, " and "), a.N, speed),
			Evidence:   ev,
			Cause:      true,
			Confidence: conf,
			Why:        "the drafter's tokens are almost never accepted",
			Remedy: "Benchmark the same load without the drafter to see what it costs. Check that the drafter was trained for this exact target (its config names the target model and revision; vocabularies must match), " +
				"regenerate its training hidden states with the engine and target revision you serve, and use the algorithm it was trained for (SGLang --speculative-algorithm EAGLE3 for an EAGLE-3 head) with the step and draft-token counts of its training.",
		})
	}
}
