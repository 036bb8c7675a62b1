// Package manifest reads and writes manifest.json, the record that
// `coroner collect` and `coroner bundle` put at the root of every bundle
// they write.
//
// # Format
//
// One JSON object. The top holds what the bundle was made by and where:
//
//	{
//	  "format": "coroner-manifest",
//	  "version": 1,
//	  "tool": {"name": "coroner", "version": "0.1.0"},
//	  "command": "collect",
//	  "started": "2026-11-30T04:24:37Z",
//	  "finished": "2026-11-30T04:25:41Z",
//	  "host": {"hostname": "gpu17", "clock": "2026-11-30T04:24:37.811Z", "zone": "CET", "utc_offset_s": 3600, ...},
//	  "target": {"engine": "sglang", "how": "--match sglang", "pids": [41170, 41171]},
//	  "rounds": [{"dir": "round-01", "n": 1, "start": "...", "end": "..."}, {"dir": "once", ...}],
//	  "redaction": {"enabled": true, "hosts": false, "counts": {"hf-token": 2}},
//	  "size_cap": {"max_bytes": 25000000},
//	  "artifacts": [
//	    {"path": "round-01/nvidia-smi-q.xml", "program": "nvidia-smi", "command": "nvidia-smi -q -x", "round": 1, "start": "...", "end": "...", "exit_code": -1, "timed_out": true, "timeout_s": 30, "bytes": 0},
//	    ...
//	  ]
//	}
//
// Every time is UTC (RFC 3339). host.utc_offset_s is the offset of the
// host's clock from UTC when the capture ran: wall-clock times in the
// evidence (ps lstart, nvidia-smi timestamps, logs without a zone) are read
// with it. Each artifact is one line, so that findings can cite it. An
// artifact records one capture, written or not: exit_code is -1 when the
// command did not exit by itself (not found, timed out, skipped); path is
// empty when nothing was written. Unknown keys are ignored, so the format
// can grow.
//
// Read as evidence, a manifest yields one facts.Artifact per artifact, a
// capture stamp per round directory (the snapshots in it were taken at the
// round's start) and the host's UTC offset as the environment variable
// TZ_OFFSET_SECONDS (from "manifest"), which fixes the zone of every
// wall-clock time in the bundle.
package manifest

import (
	"bytes"
	"encoding/json"
	"io"
	"time"
)

// Format and Version identify the manifest.
const (
	Format  = "coroner-manifest"
	Version = 1
	// Name is the manifest's path in a bundle.
	Name = "manifest.json"
)

// Manifest is manifest.json.
type Manifest struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Tool     Tool      `json:"tool"`
	Command  string    `json:"command"` // "collect" or "bundle"
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	Host     *Host     `json:"host,omitempty"`
	Target   *Target   `json:"target,omitempty"`
	Rounds   []Round   `json:"rounds,omitempty"`
	// Redaction reports what was replaced, per kind; never a value.
	Redaction Redaction `json:"redaction"`
	SizeCap   *SizeCap  `json:"size_cap,omitempty"`
	Notes     []string  `json:"notes,omitempty"`
	// Cluster and Nodes are set by a collect across a cluster: each node's
	// captures are under its Dir, with a manifest.json of their own.
	Cluster *Cluster `json:"cluster,omitempty"`
	Nodes   []Node   `json:"nodes,omitempty"`
	// Artifacts are written last, one per line (see Encode).
	Artifacts []Artifact `json:"-"`
}

// Tool is what wrote the bundle.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Host describes the machine and its clock.
type Host struct {
	Hostname string `json:"hostname,omitempty"`
	// Clock is the host's clock, in UTC, when the capture started.
	Clock time.Time `json:"clock"`
	// Zone is the zone abbreviation the host's clock showed then, and
	// UTCOffsetS its offset from UTC in seconds.
	Zone       string `json:"zone"`
	UTCOffsetS int    `json:"utc_offset_s"`
	// TZ is the zone's name where the host says it (TZ, /etc/timezone).
	TZ       string    `json:"tz,omitempty"`
	BootTime time.Time `json:"boot_time,omitzero"`
	OS       string    `json:"os,omitempty"`
	Arch     string    `json:"arch,omitempty"`
	Kernel   string    `json:"kernel,omitempty"`
	User     string    `json:"user,omitempty"`
	Root     bool      `json:"root"`
}

// Target is the server the collector looked at.
type Target struct {
	Engine string `json:"engine,omitempty"`
	// How the processes were chosen: "--pid 123", "--match vllm", "auto".
	How     string `json:"how"`
	MainPID int    `json:"main_pid,omitempty"`
	PIDs    []int  `json:"pids,omitempty"`
	Model   string `json:"model,omitempty"`
	URL     string `json:"url,omitempty"`
}

// Cluster says which cluster a collect gathered from, and through what.
type Cluster struct {
	// Kind is "kubernetes", "slurm" or "ray"; Tool the program asked
	// (kubectl, srun, ray).
	Kind string `json:"kind"`
	Tool string `json:"tool"`
	// Kubernetes: the context, namespace and label selector; Slurm: the
	// job; Ray: the address, when given.
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Job       string `json:"job,omitempty"`
	Address   string `json:"address,omitempty"`
}

// Node is one node (a Kubernetes pod, a Slurm node, a Ray node) of a
// collect across a cluster.
type Node struct {
	// Name is the node's name in the bundle, Dir its folder
	// ("nodes/sglang-0").
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Host is the machine: the pod's Kubernetes node, the Slurm node, the
	// Ray node's IP address.
	Host      string `json:"host,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Container string `json:"container,omitempty"`
	RayNodeID string `json:"ray_node_id,omitempty"`
	// State is the node's state as the cluster reports it (Running,
	// Pending, ALIVE, DEAD); Restarts a pod container's restart count.
	State    string `json:"state,omitempty"`
	Restarts int    `json:"restarts,omitempty"`
	// Status is "collected", "partial" (some captures failed) or "failed"
	// (nothing could be collected), Error why.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// ClockOffsetS is the node's clock less the collector's, in seconds,
	// read from its date at the middle of the command that printed it.
	ClockOffsetS *float64 `json:"clock_offset_s,omitempty"`
}

// Round is one round of snapshots (N from 1), or the one-time captures
// (Dir "once", N 0).
type Round struct {
	Dir   string    `json:"dir"`
	N     int       `json:"n"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Redaction says whether and what was redacted.
type Redaction struct {
	Enabled bool           `json:"enabled"`
	Hosts   bool           `json:"hosts"`
	Counts  map[string]int `json:"counts,omitempty"`
}

// SizeCap is the size the bundle was fitted under; the artifacts that
// were trimmed for it say so.
type SizeCap struct {
	MaxBytes int64 `json:"max_bytes"`
}

// Artifact is one capture.
type Artifact struct {
	Path string `json:"path,omitempty"`
	// Kind is the evidence kind detected in the content.
	Kind string `json:"kind,omitempty"`
	// Program is the command's program by its plain name (nvidia-smi),
	// whatever path ran it.
	Program  string    `json:"program,omitempty"`
	Command  string    `json:"command,omitempty"`
	Round    int       `json:"round,omitempty"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	ExitCode int       `json:"exit_code"`
	TimedOut bool      `json:"timed_out,omitempty"`
	TimeoutS float64   `json:"timeout_s,omitempty"`
	NotFound bool      `json:"not_found,omitempty"`
	// Skipped says why the capture was not attempted.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
	// Note says how a bundled file's content was reached ("decompressed
	// from gzip", "member of logs.tar.gz"); it is not an error.
	Note string `json:"note,omitempty"`
	// Stderr is the start of what the command printed on stderr.
	Stderr string `json:"stderr,omitempty"`
	// RunAs is whom a command ran as ("uid 0 (root), gid 0 (root)").
	RunAs  string `json:"run_as,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256,omitempty"`
	// Source is the file the artifact was read from (logs, bundled files),
	// SourceBytes its size then, ModTime its modification time.
	Source      string    `json:"source,omitempty"`
	SourceBytes int64     `json:"source_bytes,omitempty"`
	ModTime     time.Time `json:"mtime,omitzero"`
	// Truncated is a cut made when capturing (a log's head and tail, an
	// output limit); Trimmed one made to fit the size cap.
	Truncated *Cut `json:"truncated,omitempty"`
	Trimmed   *Cut `json:"trimmed,omitempty"`
}

// Cut says what part of a file was left out: the bytes between its first
// HeadBytes and its last TailBytes.
type Cut struct {
	OriginalBytes int64  `json:"original_bytes"`
	HeadBytes     int64  `json:"head_bytes"`
	TailBytes     int64  `json:"tail_bytes"`
	RemovedBytes  int64  `json:"removed_bytes"`
	Reason        string `json:"reason,omitempty"`
}

// Encode writes m as indented JSON with one artifact per line.
func Encode(w io.Writer, m *Manifest) error {
	head, err := marshal(m, true)
	if err != nil {
		return err
	}
	head = oneLine(head, "redaction")
	var b bytes.Buffer
	b.Write(bytes.TrimSuffix(bytes.TrimRight(head, "\n"), []byte("}")))
	b.Truncate(len(bytes.TrimRight(b.Bytes(), "\n")))
	b.WriteString(",\n  \"artifacts\": [")
	for i := range m.Artifacts {
		line, err := marshal(&m.Artifacts[i], false)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.Write(bytes.TrimRight(line, "\n"))
	}
	if len(m.Artifacts) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	_, err = w.Write(b.Bytes())
	return err
}

// oneLine writes the top-level object field key of an indented document
// on one line: the redaction report, whose counts would otherwise give a
// redacted bundle's manifest more lines than the raw one's, and move every
// line a finding cites.
func oneLine(doc []byte, key string) []byte {
	open := []byte("\n  \"" + key + "\": {")
	i := bytes.Index(doc, open)
	if i < 0 {
		return doc
	}
	start := i + len(open) - 1
	end := bytes.Index(doc[start:], []byte("\n  }"))
	if end < 0 {
		return doc
	}
	end += start + len("\n  }")
	var c bytes.Buffer
	if err := json.Compact(&c, doc[start:end]); err != nil {
		return doc
	}
	out := append([]byte(nil), doc[:start]...)
	out = append(out, c.Bytes()...)
	return append(out, doc[end:]...)
}

// marshal encodes without escaping <, > and & (commands hold them).
func marshal(v any, indent bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
