// Package catalog holds coroner's knowledge as data, embedded in the binary:
// the signature catalog and the classes of errors (read by package rules),
// the phases of the engines' frames, and NVIDIA's Xid catalog (read by the
// kernel-log parser). It imports nothing and holds no code, so that any
// package may read it.
//
// The binary reads the JSON form of each file (json/, written by gen from
// the YAML); people read and edit the YAML.
package catalog

//go:generate go run ./gen

import _ "embed"

// Xid is xid.yaml: what each NVIDIA Xid code means and what to do.
//
//go:embed xid.yaml
var Xid []byte

// XidJSON is xid.yaml's JSON form.
//
//go:embed json/xid.json
var XidJSON []byte
