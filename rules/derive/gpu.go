// GPU facts in the form rules compare them: compute capabilities.

package derive

import (
	"strconv"
	"strings"
)

// CCMajor parses the major of "12.0".
func CCMajor(cc string) (int, bool) {
	maj, _, _ := strings.Cut(cc, ".")
	n, err := strconv.Atoi(maj)
	return n, err == nil
}
