package parser

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
)

// TestHasEvidenceEveryField: one fact in any field of facts.Facts is
// evidence of a run, but for the fields that say nothing by themselves,
// so that a new kind's facts count as evidence without a change here.
func TestHasEvidenceEveryField(t *testing.T) {
	typ := reflect.TypeOf(facts.Facts{})
	for i := range typ.NumField() {
		field := typ.Field(i)
		t.Run(field.Name, func(t *testing.T) {
			f := &facts.Facts{}
			v := reflect.ValueOf(f).Elem().Field(i)
			switch v.Kind() {
			case reflect.Slice:
				elem := reflect.Zero(field.Type.Elem())
				if field.Type.Elem().Kind() == reflect.Pointer {
					elem = reflect.New(field.Type.Elem().Elem())
				}
				v.Set(reflect.Append(v, elem))
			case reflect.Map:
				v.Set(reflect.MakeMap(field.Type))
				v.SetMapIndex(reflect.Zero(field.Type.Key()), reflect.Zero(field.Type.Elem()))
			default:
				t.Fatalf("facts.Facts.%s is a %s: HasEvidence reads slices and maps", field.Name, v.Kind())
			}
			// Logs, Procs and Env count by what they hold: an empty log,
			// snapshot or unknown variable is not evidence.
			assert.Equal(t, !notEvidence[field.Name], HasEvidence(f))
		})
	}
}

func TestHasEvidence(t *testing.T) {
	tests := []struct {
		name string
		f    facts.Facts
		want bool
	}{
		{"nothing", facts.Facts{}, false},
		{"a log with lines", facts.Facts{Logs: []*facts.Log{{Lines: 3}}}, true},
		{"an empty log", facts.Facts{Logs: []*facts.Log{{}}}, false},
		{"a ps snapshot", facts.Facts{Procs: []*facts.ProcSnapshot{{Procs: []*facts.Process{{PID: 1}}}}}, true},
		{"an empty ps snapshot", facts.Facts{Procs: []*facts.ProcSnapshot{{}}}, false},
		{"an NCCL variable", facts.Facts{Env: []*facts.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}}}, true},
		{"HF_HOME", facts.Facts{Env: []*facts.EnvVar{{Name: "HF_HOME", Value: "/cache"}}}, true},
		{"a config file's names", facts.Facts{Env: []*facts.EnvVar{{Name: "ClusterName", Value: "c1"}, {Name: "PATH", Value: "/bin"}}}, false},
		{"a system description", facts.Facts{System: []*facts.SystemInfo{{OS: "Debian"}}}, false},
		{"a truncated archive", facts.Facts{Sources: []*facts.SourceInfo{{Issues: []facts.Issue{{Kind: facts.IssueTruncated}}}}}, true},
		{"a binary file", facts.Facts{Sources: []*facts.SourceInfo{{Issues: []facts.Issue{{Kind: facts.IssueBinary}}}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, HasEvidence(&tc.f))
		})
	}
}

func TestNoEvidence(t *testing.T) {
	assert.Equal(t, "in holds no files: nothing to analyze; "+WhatCoronerReads, NoEvidence("in", &facts.Facts{}))
	f := &facts.Facts{Sources: []*facts.SourceInfo{
		{Kind: facts.KindUnknown, Bytes: 10},
		{Kind: facts.KindUnknown, Issues: []facts.Issue{{Kind: facts.IssueBinary}}},
		{Kind: facts.KindFree, Bytes: 5},
	}}
	assert.Equal(t, "etc holds no evidence of a server run: 3 files, 1 of no kind coroner knows, 1 binary, "+
		"1 that looked like evidence (1 free) but held nothing coroner uses; "+WhatCoronerReads+
		" (`coroner sources etc` lists what each file was read as)", NoEvidence("etc", f))
}
