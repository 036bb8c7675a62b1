package parser

import (
	"github.com/coroner-dev/coroner/parser/capture"
	"github.com/coroner-dev/coroner/parser/facts"
)

// formats lists every parser. Order breaks ties between equal sniff scores.
var formats = []format{
	{name: "capture-time", kinds: []facts.Kind{facts.KindCaptureTime}, sniff: capture.Sniff, parse: capture.Parse},
}
