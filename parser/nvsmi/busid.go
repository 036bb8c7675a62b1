package nvsmi

import "bytes"

// NormalizeBusID turns any PCI bus id that nvidia-smi or the kernel prints
// into the one join key of the facts model: an 8-hex-digit domain, bus,
// device and function in lower case, "00000000:19:00.0".
//
// It accepts "00000000:19:00.0" (nvidia-smi), "0000:9b:00.0" (older drivers,
// NVRM GPU lines), "0000:9b:00" and "PCI:0000:9b:00" (NVRM Xid lines, which
// print no function: ".0" is assumed, as a GPU is function 0) and "19:00.0"
// (no domain: domain 0). It returns "" for anything else.
func NormalizeBusID(s string) string {
	var buf [16]byte
	b, ok := normBusID(buf[:0], []byte(s))
	if !ok {
		return ""
	}
	return string(b)
}

// normBusID appends the normalized form of s to dst.
func normBusID(dst, s []byte) ([]byte, bool) {
	s = bytes.TrimSpace(s)
	if len(s) >= 4 && eqFold(s[:4], "pci:") {
		s = s[4:]
	}
	if len(s) == 0 || len(s) > 32 {
		return dst, false
	}
	fn := byte('0')
	if i := bytes.LastIndexByte(s, '.'); i >= 0 {
		if i != len(s)-2 || !isHexByte(s[i+1]) {
			return dst, false
		}
		fn = lowerHex(s[i+1])
		s = s[:i]
	}
	dom := []byte("0")
	i := bytes.IndexByte(s, ':')
	if i < 0 {
		return dst, false
	}
	if j := bytes.IndexByte(s[i+1:], ':'); j >= 0 {
		dom, s = s[:i], s[i+1:]
		i = j
	}
	bus, dev := s[:i], s[i+1:]
	if len(dom) == 0 || len(dom) > 8 || len(bus) == 0 || len(bus) > 2 || len(dev) == 0 || len(dev) > 2 {
		return dst, false
	}
	if !isHex(dom) || !isHex(bus) || !isHex(dev) {
		return dst, false
	}
	dst = padHex(dst, dom, 8)
	dst = append(dst, ':')
	dst = padHex(dst, bus, 2)
	dst = append(dst, ':')
	dst = padHex(dst, dev, 2)
	return append(dst, '.', fn), true
}

func padHex(dst, s []byte, n int) []byte {
	for i := len(s); i < n; i++ {
		dst = append(dst, '0')
	}
	for _, c := range s {
		dst = append(dst, lowerHex(c))
	}
	return dst
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

func isHexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isHex(s []byte) bool {
	for _, c := range s {
		if !isHexByte(c) {
			return false
		}
	}
	return len(s) > 0
}
