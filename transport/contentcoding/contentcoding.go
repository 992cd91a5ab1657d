// Package contentcoding undoes the content codings of an HTTP body (RFC 9110 §8.4), so
// two responses are compared by what they say and not by how they were compressed: a
// target that gzips its answers writes its own header time and may pick another level
// per response, and the same stored response then arrives as other bytes.
//
// It decodes gzip (and its alias x-gzip) and deflate (zlib, and the raw deflate some
// servers send under that name) with the standard library, and nothing else: brotli and
// zstd would each need a library, and idemproof never asks for them (its requests carry
// no Accept-Encoding unless a profile adds one, and a profile may add only these, see
// Supported). The decoded size is bounded, so a small compressed body cannot make the
// reader allocate without limit.
package contentcoding

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Supported are the codings Decode undoes, as a request's Accept-Encoding names them.
var Supported = []string{"gzip", "x-gzip", "deflate", "identity"}

// ErrTooLarge is returned when the decoded body would exceed the given limit.
var ErrTooLarge = errors.New("decoded body over the size limit")

// Decode undoes the codings named by a Content-Encoding header value, last applied
// first, and returns the body as it was before them; at most limit bytes of it. An empty
// or "identity" value returns body itself.
func Decode(contentEncoding string, body []byte, limit int64) ([]byte, error) {
	if len(Codings(contentEncoding)) == 0 {
		return body, nil
	}
	r, err := NewReader(contentEncoding, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return out, nil
}

// NewReader returns a reader of what r carries with the codings of a Content-Encoding
// value undone, as it streams (an event stream is read as it arrives); r itself when
// there are none. A coding it does not decode is an error before anything is read.
func NewReader(contentEncoding string, r io.Reader) (io.Reader, error) {
	codings := Codings(contentEncoding)
	for _, c := range codings {
		if !IsSupported(c) {
			return nil, fmt.Errorf("content coding %q is not one idemproof decodes (it decodes %s)", c, strings.Join(Supported[:3], ", "))
		}
	}
	if len(codings) == 0 {
		return r, nil
	}
	r = source{r}
	for i := len(codings) - 1; i >= 0; i-- {
		r = &lazy{coding: codings[i], src: r}
	}
	return r, nil
}

// Codings lists the codings of a Content-Encoding value in the order they were applied,
// lower case, without "identity".
func Codings(contentEncoding string) []string {
	var out []string
	for _, c := range strings.Split(contentEncoding, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && c != "identity" {
			out = append(out, c)
		}
	}
	return out
}

// IsSupported reports whether Decode undoes the coding (a name from Accept-Encoding or
// Content-Encoding, any case).
func IsSupported(coding string) bool {
	c := strings.ToLower(strings.TrimSpace(coding))
	for _, s := range Supported {
		if c == s {
			return true
		}
	}
	return false
}

// lazy undoes one coding, and sets its decoder up on the first Read: nothing is read
// before, so a connection that fails before the coding's header arrived fails there, as
// a SourceError, and is not mistaken for a body that is not what it says.
type lazy struct {
	coding string
	src    io.Reader
	dec    io.Reader
	err    error
}

func (l *lazy) Read(p []byte) (int, error) {
	if l.dec == nil && l.err == nil {
		l.dec, l.err = open(l.coding, l.src)
	}
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.dec.Read(p)
	if err != nil && err != io.EOF {
		err = named(l.coding, err)
	}
	return n, err
}

func open(coding string, r io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, named("gzip", err)
		}
		return zr, nil
	default: // deflate
		// RFC 9110 says zlib; some servers send raw deflate under this name. The zlib
		// header is two bytes (a multiple of 31, method 8), so they are looked at first.
		br := bufio.NewReader(r)
		head, err := br.Peek(2)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, named("deflate", err)
		}
		if (uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[0]&0x0f == 8 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, named("deflate", err)
			}
			return zr, nil
		}
		return flate.NewReader(br), nil
	}
}

// named wraps a decoder's error in a DecodeError naming its coding, once.
func named(coding string, err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return err
	}
	return &DecodeError{Coding: coding, Err: err}
}

// DecodeError is an error met while undoing a coding: the decoder's own (the body is
// not what its Content-Encoding says) or, wrapped in it, the reader's under it.
type DecodeError struct {
	Coding string
	Err    error
}

func (e *DecodeError) Error() string { return e.Coding + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// SourceError is an error of the reader under the decoders (the connection), as
// opposed to a body that does not decode.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// source tags the errors of the reader under the decoders.
type source struct{ r io.Reader }

func (s source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &SourceError{err}
	}
	return n, err
}

// IsDecodeError reports whether a read of a NewReader failed because the body is not
// what its Content-Encoding says (a corrupt or cut-short stream) rather than in the
// reader under it.
func IsDecodeError(err error) bool {
	var de *DecodeError
	var se *SourceError
	return errors.As(err, &de) && !errors.As(err, &se) && !errors.Is(err, io.ErrUnexpectedEOF)
}
