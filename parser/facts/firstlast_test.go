package facts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstLast(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
		drop int
	}{
		{3, []int{0, 1, 2}, 0},
		{6, []int{0, 1, 2, 3, 4, 5}, 0},
		{10, []int{0, 1, 2, 7, 8, 9}, 4},
	} {
		k := FirstLast[int]{Max: 6}
		for i := 0; i < c.n; i++ {
			k.Add(i)
		}
		assert.Equal(t, c.want, k.All(), "%d records", c.n)
		assert.Equal(t, c.drop, k.Dropped)
		first, last := k.Kept()
		assert.Equal(t, len(c.want), first+last)
	}
}
