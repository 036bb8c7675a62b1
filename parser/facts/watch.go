package facts

// LineWatch picks lines out of a server log while it is read, for the
// signatures that see every line of a log (a user pack's), not only the
// records the parser keeps. The parser keeps the lines it wants, bounded,
// in Log.Watched.
type LineWatch interface {
	// Want reports whether a raw line (header and all) may interest a
	// signature. It is called once per line on the reading goroutine and
	// must be cheap: a literal prefilter, not a regexp.
	Want(line []byte) bool
}

// MaxWatched bounds the watched lines kept per log: the first quarter and
// the last three quarters of those wanted, as for Unmatched.
const MaxWatched = 4000
