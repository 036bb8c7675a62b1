package nvsmi

import "strings"

// NormalizeBusID turns any PCI bus id that nvidia-smi or the kernel prints
// into the one join key of the facts model: an 8-hex-digit domain, bus,
// device and function in lower case, "00000000:19:00.0".
//
// It accepts "00000000:19:00.0" (nvidia-smi), "0000:9b:00.0" (older drivers,
// NVRM GPU lines), "0000:9b:00" and "PCI:0000:9b:00" (NVRM Xid lines, which
// print no function: ".0" is assumed, as a GPU is function 0) and "19:00.0"
// (no domain: domain 0). It returns "" for anything else.
func NormalizeBusID(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 4 && strings.EqualFold(s[:4], "PCI:") {
		s = s[4:]
	}
	if s == "" || len(s) > 32 {
		return ""
	}
	fn := "0"
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		fn = s[i+1:]
		s = s[:i]
		if len(fn) != 1 || !isHex(fn) {
			return ""
		}
	}
	parts := strings.Split(s, ":")
	var dom, bus, dev string
	switch len(parts) {
	case 3:
		dom, bus, dev = parts[0], parts[1], parts[2]
	case 2:
		dom, bus, dev = "0", parts[0], parts[1]
	default:
		return ""
	}
	if len(dom) == 0 || len(dom) > 8 || len(bus) == 0 || len(bus) > 2 || len(dev) == 0 || len(dev) > 2 {
		return ""
	}
	if !isHex(dom) || !isHex(bus) || !isHex(dev) {
		return ""
	}
	var b strings.Builder
	b.Grow(16)
	pad(&b, dom, 8)
	b.WriteByte(':')
	pad(&b, bus, 2)
	b.WriteByte(':')
	pad(&b, dev, 2)
	b.WriteByte('.')
	b.WriteString(strings.ToLower(fn))
	return b.String()
}

func pad(b *strings.Builder, s string, n int) {
	for i := len(s); i < n; i++ {
		b.WriteByte('0')
	}
	b.WriteString(strings.ToLower(s))
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}
