package facts

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Fields lists a payload's fields by name, as packs and the by-name
// accessors see them, and as the JSON output has them: numbers the line
// printed as float64, strings that are not empty, flags that are set (and
// unset ones whose tag has no omitempty: those are always said). A settings
// dump's or an engine config's own keys sit beside the payload's fields.
// Rules read the typed fields instead.
func Fields(p Payload) map[string]any {
	out := map[string]any{}
	if p == nil || reflect.ValueOf(p).IsNil() {
		return out
	}
	switch x := p.(type) {
	case *Settings:
		for k, v := range x.Values {
			out[k] = v
		}
	case *EngineConfig:
		for k, v := range x.Config {
			out[k] = v
		}
	}
	v := reflect.ValueOf(p).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := fieldName(t.Field(i))
		if name == "" {
			continue
		}
		always := !strings.Contains(t.Field(i).Tag.Get("json"), ",omit")
		switch f := v.Field(i).Interface().(type) {
		case Num:
			if f.OK {
				out[name] = f.V
			}
		case string:
			if f != "" {
				out[name] = f
			}
		case bool:
			if f || always {
				out[name] = f
			}
		}
	}
	return out
}

// FieldNames lists the names of the fields events of type t carry, sorted:
// the schema a pack's field matches are checked against. Settings dumps and
// engine configs also carry the engine's own keys, which no list holds;
// open reports that.
func FieldNames(t EventType) (names []string, open bool) {
	p := PayloadOf(t)
	if p == nil {
		return nil, false
	}
	switch p.(type) {
	case *Settings, *EngineConfig:
		open = true
	}
	rt := reflect.TypeOf(p).Elem()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		switch f.Type {
		case reflect.TypeOf(Num{}), reflect.TypeOf(""), reflect.TypeOf(false):
			if n := fieldName(f); n != "" {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names, open
}

// fieldName is a struct field's name in the schema: its json tag's.
func fieldName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// SetField sets the payload's field of that name to v, converted to the
// field's type: a number to Num, text to a string, a flag to a bool. It
// reports false, leaving the payload as it was, when the payload has no such
// field or v does not fit it. It is for recognizers that read "name=value"
// lists, where the line names the field.
func SetField(p Payload, name string, v any) bool {
	rv := reflect.ValueOf(p)
	if p == nil || rv.IsNil() {
		return false
	}
	rv = rv.Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		if fieldName(rt.Field(i)) != name {
			continue
		}
		f := rv.Field(i)
		switch x := v.(type) {
		case float64:
			if f.Type() == reflect.TypeOf(Num{}) {
				f.Set(reflect.ValueOf(N(x)))
				return true
			}
		case string:
			if f.Kind() == reflect.String {
				f.SetString(x)
				return true
			}
		case bool:
			if f.Kind() == reflect.Bool {
				f.SetBool(x)
				return true
			}
		}
		return false
	}
	return false
}

// ValueText is a field's or a setting's value as text: a string as it is, a
// number or flag as fmt prints it, anything else (or nothing) "".
func ValueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64, bool:
		return fmt.Sprint(x)
	}
	return ""
}
