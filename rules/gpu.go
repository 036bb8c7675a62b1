// GPU facts in the form rules compare them: compute capabilities.

package rules

import (
	"strconv"
	"strings"
)

// ccNumber turns "12.0" into 120.
func ccNumber(cc string) int {
	maj, ok := ccMajor(cc)
	if !ok {
		return 0
	}
	return maj*10 + minorOf(cc)
}

// ccMajor parses the major of "12.0".
func ccMajor(cc string) (int, bool) {
	maj, _, _ := strings.Cut(cc, ".")
	n, err := strconv.Atoi(maj)
	return n, err == nil
}

func minorOf(cc string) int {
	_, m, _ := strings.Cut(cc, ".")
	n, _ := strconv.Atoi(m)
	return n
}

func shortGPU(name string) string {
	return strings.TrimSpace(strings.TrimPrefix(name, "NVIDIA "))
}
