// Package catalog holds coroner's knowledge as data, embedded in the binary:
// the signature catalog and the classes of errors (read by package rules),
// the phases of the engines' frames, and NVIDIA's Xid catalog (read by the
// kernel-log parser). It imports nothing and holds no code, so that any
// package may read it.
package catalog

import _ "embed"

// Xid is xid.yaml: what each NVIDIA Xid code means and what to do.
//
//go:embed xid.yaml
var Xid []byte
