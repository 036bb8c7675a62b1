// Package jsonform is the form in which the binary reads the embedded
// catalogs: JSON generated from their YAML. The YAML stays what people
// read, edit and review; decoding it with the YAML library took 40 ms of
// every run (most of coroner's fixed cost), and encoding/json reads the
// same data in a tenth of that.
package jsonform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-yaml"
)

// FromYAML converts a YAML document to JSON: one value to a line, keys in
// their YAML order, so that the generated files diff as their sources do.
func FromYAML(data []byte) ([]byte, error) {
	var v any
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.UseOrderedMap()); err != nil {
		return nil, errors.New(yaml.FormatError(err, false, false))
	}
	var b bytes.Buffer
	if err := write(&b, v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", " "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// write encodes v, keeping the order of ordered maps (json.Marshal would
// sort a map's keys, and yaml.MapSlice has no JSON form of its own).
func write(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case yaml.MapSlice:
		b.WriteByte('{')
		for i, it := range v {
			k, ok := it.Key.(string)
			if !ok {
				return fmt.Errorf("a key that is not a string: %v", it.Key)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			if err := write(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := write(b, it.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := write(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		// Without HTML escapes: "<frozen ...>" stays readable.
		e := json.NewEncoder(b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	return nil
}

// DecodeYAML reads the YAML source into v strictly (a key no field takes is
// an error), with the YAML library's located message: what tests and user
// files are read with, and what Decode must agree with.
func DecodeYAML(data []byte, v any) error {
	if err := yaml.UnmarshalWithOptions(data, v, yaml.Strict()); err != nil {
		return errors.New(yaml.FormatError(err, false, false))
	}
	return nil
}

// Decode reads data into v as the YAML decoder reads the source strictly:
// a field v does not have is an error, and so is anything after the value.
// Unlike YAML's, encoding/json matches keys without regard to case; the
// files are what FromYAML wrote, and tests compare both decodings.
func Decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	// More is false before a stray '}' or ']': read a token instead.
	if _, err := d.Token(); err != io.EOF {
		return errors.New("data after the value")
	}
	return nil
}
