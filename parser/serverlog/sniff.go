package serverlog

import (
	"bytes"
)

// sniffContent scores the head of a file as an SGLang log, a vLLM log and
// another server log. Lines are taken apart as the parser does, so that
// wrappers and ANSI codes in front do not hide the engine; the first lines
// are often library warnings, a pasted command or "nohup: ignoring input".
func sniffContent(head []byte) (sg, vl, other int) {
	var buf []byte
	for n := 0; len(head) > 0 && n < 400; n++ {
		i := bytes.IndexByte(head, '\n')
		ln := head
		if i >= 0 {
			ln, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if hasEscape(ln) {
			buf = stripANSI(buf[:0], ln)
			ln = buf
		}
		for _, seg := range bytes.Split(ln, []byte("\r")) {
			if len(bytes.TrimSpace(seg)) == 0 {
				continue
			}
			s, v, o := sniffLine(seg)
			sg, vl, other = max(sg, s), max(vl, v), max(other, o)
		}
	}
	return sg, vl, other
}

func sniffLine(seg []byte) (sg, vl, other int) {
	var l line
	l.reset(seg)
	peel(&l)
	b := l.body
	switch l.kind {
	case hdrSGLang:
		sg = 50
		if len(l.ranks) > 0 {
			sg = 85
		}
	case hdrSGLangOld:
		sg = 55
		if len(l.ranks) > 0 {
			sg = 80
		}
	case hdrGPU:
		if has(b, "Load weight") || has(b, "Init ") || has(b, "Memory pool") || has(b, "Capture") {
			sg = 80
		}
	case hdrVLLM:
		vl = 80
		if has(b, "Automatically detected platform") {
			vl = 40
		}
	case hdrNCCL:
		other = 40
	case hdrGlog, hdrC10d, hdrGloo, hdrPyLog, hdrRay, hdrRayCpp:
		other = 35
	case hdrUvicorn:
		other = 30
	}
	if l.tag != nil && l.kind != hdrSGLang {
		switch {
		case has(l.tag, "APIServer"), has(l.tag, "ApiServer"), has(l.tag, "EngineCore"), has(l.tag, "Worker_"),
			has(l.tag, "VllmWorker"):
			vl = max(vl, 85)
		}
	}
	switch {
	case contains(b, "server_args=ServerArgs("), has(b, "sglang is using nccl"),
		has(b, "The server is fired up and ready to roll"):
		sg = max(sg, 95)
	case contains(b, "vLLM API server version"), contains(b, "Initializing a V1 LLM engine"), contains(b, "Initializing a V0 LLM engine"),
		has(b, "non-default args:"), has(b, "vLLM is using nccl"):
		vl = max(vl, 95)
	// A launch command is pasted at the top of many logs, but it is also
	// all a launch script or a ps row holds: it suggests, it does not prove.
	case contains(b, "sglang.launch_server"), contains(b, "sglang serve"):
		sg = max(sg, 40)
	case contains(b, "vllm serve "), contains(b, "vllm.entrypoints"):
		vl = max(vl, 40)
	case bytes.HasPrefix(bytes.TrimSpace(b), tbHead):
		other = max(other, 35)
	}
	if l.kind == hdrSGLang && sg < 90 && (has(b, "Load weight") || has(b, "Init torch distributed") ||
		has(b, "Capture cuda graph") || has(b, "KV Cache is allocated") || has(b, "Memory pool end") ||
		has(b, "max_total_num_tokens=") || has(b, "Decode batch") || has(b, "Prefill batch")) {
		sg = 92
	}
	return sg, vl, other
}
