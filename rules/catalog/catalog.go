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

// Signatures is signatures.yaml: the catalog of known error texts (read by
// package rules/derive, which takes each entry's line from it).
//
//go:embed signatures.yaml
var Signatures []byte

// Exceptions is exceptions.yaml: the classes of errors.
//
//go:embed exceptions.yaml
var Exceptions []byte

// The JSON forms the binary decodes (json/, go generate ./rules/catalog).
var (
	//go:embed json/signatures.json
	SignaturesJSON []byte
	//go:embed json/exceptions.json
	ExceptionsJSON []byte
	//go:embed json/versions.json
	VersionsJSON []byte
	//go:embed json/frames.json
	FramesJSON []byte
)
