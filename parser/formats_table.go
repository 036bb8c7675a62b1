package parser

import (
	"github.com/coroner-dev/coroner/parser/capture"
	"github.com/coroner-dev/coroner/parser/envinfo"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/kernlog"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/parser/meminfo"
	"github.com/coroner-dev/coroner/parser/nvsmi"
	"github.com/coroner-dev/coroner/parser/probe"
	"github.com/coroner-dev/coroner/parser/procs"
	"github.com/coroner-dev/coroner/parser/pyspy"
	"github.com/coroner-dev/coroner/parser/serverlog"
)

// formats lists every parser. Order breaks ties between equal sniff scores.
var formats = []format{
	{name: "capture-time", kinds: []facts.Kind{facts.KindCaptureTime}, sniff: capture.Sniff, parse: capture.Parse},
	{name: "serverlog", kinds: []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog}, sniff: serverlog.Sniff, parse: serverlog.Parse},
	{name: "procs", kinds: []facts.Kind{facts.KindPS, facts.KindTop}, sniff: procs.Sniff, parse: procs.Parse},
	{name: "kernlog", kinds: []facts.Kind{facts.KindKernelLog}, sniff: kernlog.Sniff, parse: kernlog.Parse},
	{name: "nvsmi", kinds: []facts.Kind{facts.KindNvidiaSMIQ, facts.KindNvidiaSMIXML, facts.KindNvidiaSMICSV, facts.KindNvidiaSMITable,
		facts.KindNvidiaSMIDmon, facts.KindNvidiaSMIPmon, facts.KindNvidiaSMITopo, facts.KindNvidiaSMIList}, sniff: nvsmi.Sniff, parse: nvsmi.Parse},
	{name: "envinfo", kinds: []facts.Kind{facts.KindCollectEnv, facts.KindCheckEnv, facts.KindEnv, facts.KindCmdline, facts.KindSystem, facts.KindPipList},
		sniff: envinfo.Sniff, parse: envinfo.Parse},
	{name: "probe", kinds: []facts.Kind{facts.KindProbe}, sniff: probe.Sniff, parse: probe.Parse},
	{name: "pyspy", kinds: []facts.Kind{facts.KindPySpy}, sniff: pyspy.Sniff, parse: pyspy.Parse},
	{name: "meminfo", kinds: []facts.Kind{facts.KindMeminfo, facts.KindFree, facts.KindDF, facts.KindCgroupMemory}, sniff: meminfo.Sniff, parse: meminfo.Parse},
	{name: "manifest", kinds: []facts.Kind{facts.KindManifest}, sniff: manifest.Sniff, parse: manifest.Parse},
}
