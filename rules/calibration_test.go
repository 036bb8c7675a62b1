package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCombine(t *testing.T) {
	assert.Equal(t, 0.7, combine([]float64{0.7}, 0), "one finding keeps its confidence")
	two := combine([]float64{0.7, 0.6}, 0)
	assert.Greater(t, two, 0.7, "a second finding for the same cause strengthens it")
	assert.Less(t, two, 0.95, "but findings of one run are damped: not independent")
	assert.Less(t, combine([]float64{0.7}, 1), 0.7, "a rejection weakens it")
	assert.Equal(t, combine([]float64{0.6, 0.7}, 0), two, "order does not matter")
	assert.Zero(t, combine(nil, 0))
}

func TestCalibrate(t *testing.T) {
	cal := &Calibration{Keys: map[string]Count{"signature/port-in-use": {Fired: 8, Right: 8}, "nccl-p2p": {Fired: 8, Right: 2}}}
	f := Finding{Rule: "signature", Signature: "port-in-use", Confidence: 0.9, Cause: true}
	assert.Equal(t, "right in 8 of 8 labeled cases where it named a cause", cal.Calibrate(&f))
	assert.Equal(t, 0.98, f.Confidence, "(8 + 2*0.9) / (8 + 2)")
	g := Finding{Rule: "nccl-p2p", Confidence: 0.5, Cause: true}
	cal.Calibrate(&g)
	assert.Equal(t, 0.3, g.Confidence, "(2 + 2*0.5) / (8 + 2): measured precision pulls it down")
	h := Finding{Rule: "never-seen", Confidence: 0.6, Cause: true}
	assert.Equal(t, "not yet measured on labeled cases", cal.Calibrate(&h))
	assert.Equal(t, 0.6, h.Confidence)
}
