package parser

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
)

// holdsNothing sees every field of Facts: a source's facts are dropped
// after its parse only when they are empty, so that the empty facts of
// 100,000 unknown files are not kept to the merge (issue 18, item 3: 50 MB
// of them, and a garbage collector thrashing under the memory limit).
func TestHoldsNothing(t *testing.T) {
	assert.True(t, holdsNothing(&facts.Facts{}))
	assert.True(t, holdsNothing(&facts.Facts{Clocks: map[string]facts.Clock{}}))
	typ := reflect.TypeOf(facts.Facts{})
	for i := range typ.NumField() {
		f := &facts.Facts{}
		v := reflect.ValueOf(f).Elem().Field(i)
		switch v.Kind() {
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
			v.Set(m)
		default:
			t.Fatalf("field %s of kind %s: teach this test (and holdsNothing) about it", typ.Field(i).Name, v.Kind())
		}
		assert.False(t, holdsNothing(f), "a Facts with one %s is not empty", typ.Field(i).Name)
	}
}
