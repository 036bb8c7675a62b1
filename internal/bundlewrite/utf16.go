package bundlewrite

import (
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// utf16Reader decodes UTF-16 (after its byte order mark) to UTF-8. An
// unpaired surrogate becomes U+FFFD, as encoding/json and the Windows
// tools that write such files do; an odd last byte is dropped.
type utf16Reader struct {
	src     io.Reader
	be      bool
	in      []byte // undecoded bytes
	out     []byte // decoded, not yet read
	started bool   // the byte order mark was skipped
	high    rune   // a high surrogate waiting for its pair (0: none)
	err     error
}

func newUTF16Reader(src io.Reader, bigEndian bool) *utf16Reader {
	return &utf16Reader{src: src, be: bigEndian, in: make([]byte, 0, 32<<10)}
}

func (r *utf16Reader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			if r.high != 0 {
				r.out = utf8.AppendRune(r.out, utf8.RuneError)
				r.high = 0
				continue
			}
			return 0, r.err
		}
		n, err := r.src.Read(r.in[len(r.in):cap(r.in)])
		r.in = r.in[:len(r.in)+n]
		if err != nil {
			r.err = err
		}
		r.decode()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// decode moves the whole code units of in to out.
func (r *utf16Reader) decode() {
	r.out = r.out[:0]
	i := 0
	if !r.started && len(r.in) >= 2 {
		i, r.started = 2, true
	}
	for ; i+1 < len(r.in); i += 2 {
		u := rune(r.in[i])<<8 | rune(r.in[i+1])
		if !r.be {
			u = rune(r.in[i+1])<<8 | rune(r.in[i])
		}
		switch {
		case r.high != 0:
			if utf16.IsSurrogate(u) && u >= 0xdc00 {
				r.out = utf8.AppendRune(r.out, utf16.DecodeRune(r.high, u))
				r.high = 0
				continue
			}
			r.out = utf8.AppendRune(r.out, utf8.RuneError)
			r.high = 0
			i -= 2 // decode u again on its own
		case u >= 0xd800 && u < 0xdc00:
			r.high = u
		case utf16.IsSurrogate(u):
			r.out = utf8.AppendRune(r.out, utf8.RuneError)
		default:
			r.out = utf8.AppendRune(r.out, u)
		}
	}
	rest := copy(r.in, r.in[i:])
	r.in = r.in[:rest]
}
