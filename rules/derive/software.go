package derive

import (
	"maps"
	"slices"

	"github.com/coroner-dev/coroner/parser/facts"
)

// The software a run ran on is read from the facts here, once, as a list of
// readings: each is one version one piece of evidence shows, with where it
// was read. The signature and driver rules (Versions), the report's
// environment section and diff all choose from this list, each by its own
// order of trust and under its own names; none reads versions from the raw
// facts.

// ReadingKind is the kind of evidence a reading comes from.
type ReadingKind int

const (
	// ByEnvReport is a line of collect_env, check_env or a package list;
	// Key is the report's key ("torch", "cuda_runtime", "pip:flashinfer").
	ByEnvReport ReadingKind = iota
	// ByBanner is a log that names its engine or prints a version: Key is
	// the engine ("" when the log does not say which), Value its version
	// ("" when the log does not print it).
	ByBanner
	// ByNCCLRuntime is the version line of the NCCL the engine loaded
	// (one per log, the first).
	ByNCCLRuntime
	// ByNCCLMention is the first line of a log that names an NCCL version
	// ("NCCL version 2.21.5+cuda12.4"), NCCL's banner or torch's NCCL errors.
	ByNCCLMention
	// BySnapshot is nvidia-smi's header: Key "driver" or "cuda-driver".
	BySnapshot
	// BySystem is a system description: Key is its version key
	// ("driver", "cuda_driver") or, for platform readings, os, kernel, host.
	BySystem
	// ByImageTag is a container image's tag; Detail is the image.
	ByImageTag
)

// Reading is one version (or platform fact) the bundle shows.
type Reading struct {
	Kind  ReadingKind
	Key   string
	Value string
	Src   facts.Source
	// Detail is the env report's format or the container image.
	Detail string
	// Group tells the readings of one source apart: readings of the same
	// env report or log share it.
	Group int
}

// Software is every version reading of the bundle, computed once, in the
// order: engine banners and NCCL lines log by log, nvidia-smi, system
// descriptions, env reports (keys sorted), image tags. Callers must not
// modify it.
func (idx *Index) Software() []Reading { return idx.software }

// Platform is what the bundle says of the machine (os, kernel, arch, cpu,
// hypervisor, host): system descriptions first, then env reports.
func (idx *Index) Platform() []Reading { return idx.platform }

func readSoftware(f *facts.Facts) (soft, platform []Reading) {
	group := 0
	for _, l := range f.Logs {
		group++
		if l.Engine != facts.EngineUnknown || l.Version != "" {
			soft = append(soft, Reading{Kind: ByBanner, Key: string(l.Engine), Value: l.Version, Src: bannerSrc(l), Group: group})
		}
		for _, e := range l.Events {
			if d, ok := e.Data.(*facts.NCCL); ok && e.Type == facts.EventNCCLVersion && d.Version != "" {
				soft = append(soft, Reading{Kind: ByNCCLRuntime, Key: "nccl", Value: d.Version, Src: e.Src, Group: group})
				break
			}
		}
		if r, ok := ncclMention(l); ok {
			r.Group = group
			soft = append(soft, r)
		}
	}
	// The first snapshot that prints each: the rest repeat it (a snapshot
	// of another format may print only one of the two).
	var driver, cuda *facts.GPUSnapshot
	for _, s := range f.GPUs {
		if driver == nil && s.Driver != "" {
			driver = s
		}
		if cuda == nil && s.CUDA != "" {
			cuda = s
		}
	}
	if driver != nil {
		group++
		soft = append(soft, Reading{Kind: BySnapshot, Key: "driver", Value: driver.Driver, Src: driver.Src, Group: group})
	}
	if cuda != nil {
		if cuda != driver {
			group++
		}
		soft = append(soft, Reading{Kind: BySnapshot, Key: "cuda-driver", Value: cuda.CUDA, Src: cuda.Src, Group: group})
	}
	for _, s := range f.System {
		group++
		for _, k := range slices.Sorted(maps.Keys(s.Versions)) {
			soft = append(soft, Reading{Kind: BySystem, Key: k, Value: s.Versions[k], Src: s.Src, Group: group})
		}
		for _, p := range []struct{ key, value string }{{"os", s.OS}, {"kernel", s.Kernel}, {"host", s.Hostname}} {
			if p.value != "" {
				platform = append(platform, Reading{Kind: BySystem, Key: p.key, Value: p.value, Src: s.Src, Group: group})
			}
		}
	}
	// Env reports after system descriptions: the platform list is read in
	// this order, the software list by kind.
	var envs []Reading
	for _, r := range f.Envs {
		group++
		for _, k := range slices.Sorted(maps.Keys(r.Versions)) {
			src, ok := r.Where[k]
			if !ok {
				src = r.Src
			}
			rd := Reading{Kind: ByEnvReport, Key: k, Value: r.Versions[k], Src: src, Detail: string(r.Format), Group: group}
			switch k {
			case "os", "kernel", "arch", "cpu", "hypervisor":
				platform = append(platform, rd)
			}
			envs = append(envs, rd)
		}
	}
	soft = append(soft, envs...)
	for _, c := range f.Cmds {
		img := c.Container["image"]
		if img == "" {
			continue
		}
		group++
		for _, t := range imageTags {
			if m := t.re.FindStringSubmatch(img); m != nil {
				soft = append(soft, Reading{Kind: ByImageTag, Key: t.pkg, Value: m[1], Src: c.Src, Detail: img, Group: group})
			}
		}
	}
	return soft, platform
}

// bannerSrc is where a log shows its engine's version: the version line
// or engine-init line that agrees with the log's version, else the
// process's first line, else the file.
func bannerSrc(l *facts.Log) facts.Source {
	src := facts.Source{File: l.Path}
	if len(l.Procs) > 0 {
		src = l.Procs[0].FirstSrc
	}
	for _, e := range l.Events {
		if v := e.EngineVersion(); v != "" && (l.Version == "" || v == l.Version) {
			return e.Src
		}
	}
	return src
}

// ncclMention finds the first line of a log that names an NCCL version.
func ncclMention(l *facts.Log) (Reading, bool) {
	for _, evs := range [][]*facts.LogEvent{l.Events, l.Unmatched} {
		for _, e := range evs {
			if m := ncclBannerRE.FindStringSubmatch(e.Msg); m != nil {
				return Reading{Kind: ByNCCLMention, Key: "nccl", Value: m[1], Src: e.Src}, true
			}
		}
	}
	return Reading{}, false
}

// ReadingsOf returns the readings of one kind, in list order.
func ReadingsOf(rs []Reading, kind ReadingKind) []Reading {
	var out []Reading
	for _, r := range rs {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// EnvReports are the env-report readings, one map by key per report, in
// report order: each reader picks a component's first key a report has.
func EnvReports(rs []Reading) []map[string]Reading {
	var out []map[string]Reading
	group := -1
	for _, r := range rs {
		if r.Kind != ByEnvReport {
			continue
		}
		if r.Group != group {
			out, group = append(out, map[string]Reading{}), r.Group
		}
		out[len(out)-1][r.Key] = r
	}
	return out
}
