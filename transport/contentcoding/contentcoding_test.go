package contentcoding_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/transport/contentcoding"
)

func gzipped(t *testing.T, body []byte, level int, mtime time.Time) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	require.NoError(t, err)
	w.ModTime = mtime
	_, err = w.Write(body)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

func TestOneResponseCompressedTwoWaysDecodesToTheSameBytes(t *testing.T) {
	body := bytes.Repeat([]byte(`{"id":"re_1","amount":4900}`), 50)
	a := gzipped(t, body, gzip.BestSpeed, time.Unix(1, 0))
	b := gzipped(t, body, gzip.BestCompression, time.Unix(2, 0))
	require.NotEqual(t, a, b, "the wire bytes differ")
	da, err := contentcoding.Decode("gzip", a, 1<<20)
	require.NoError(t, err)
	db, err := contentcoding.Decode("GZIP ", b, 1<<20)
	require.NoError(t, err)
	require.Equal(t, body, da)
	require.Equal(t, body, db)
}

func TestDeflateAsZlibOrRawAndStackedCodings(t *testing.T) {
	body := []byte(`{"ok":true}`)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(body)
	require.NoError(t, zw.Close())
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, flate.DefaultCompression)
	_, _ = fw.Write(body)
	require.NoError(t, fw.Close())
	for name, enc := range map[string][]byte{"zlib": z.Bytes(), "raw": raw.Bytes()} {
		got, err := contentcoding.Decode("deflate", enc, 1<<20)
		require.NoError(t, err, name)
		require.Equal(t, body, got, name)
	}
	// Content-Encoding lists codings in the order they were applied: deflate, then gzip.
	stacked := gzipped(t, z.Bytes(), gzip.DefaultCompression, time.Time{})
	got, err := contentcoding.Decode("deflate, gzip", stacked, 1<<20)
	require.NoError(t, err)
	require.Equal(t, body, got)
}

func TestIdentityAndNoCodingReturnTheBodyItself(t *testing.T) {
	body := []byte("plain")
	for _, ce := range []string{"", "identity", " Identity "} {
		got, err := contentcoding.Decode(ce, body, 1)
		require.NoError(t, err)
		require.Equal(t, body, got)
	}
}

func TestBoundedUnknownAndBrokenBodiesAreErrors(t *testing.T) {
	bomb := gzipped(t, make([]byte, 1<<20), gzip.BestCompression, time.Time{})
	require.Less(t, len(bomb), 4<<10)
	_, err := contentcoding.Decode("gzip", bomb, 64<<10)
	require.ErrorIs(t, err, contentcoding.ErrTooLarge)

	_, err = contentcoding.Decode("br", []byte{1, 2, 3}, 1<<20)
	require.ErrorContains(t, err, `content coding "br" is not one idemproof decodes (it decodes gzip, x-gzip, deflate)`)

	good := gzipped(t, []byte(`{"a":1}`), gzip.DefaultCompression, time.Time{})
	_, err = contentcoding.Decode("gzip", good[:len(good)-6], 1<<20)
	require.ErrorContains(t, err, "gzip:")
	_, err = contentcoding.Decode("gzip", []byte(`{"not":"gzip"}`), 1<<20)
	require.ErrorContains(t, err, "gzip:")

	require.True(t, contentcoding.IsSupported("GZIP"))
	require.False(t, contentcoding.IsSupported("br"))
}

// A connection that fails under the decoder, even before the gzip header arrived, is the
// connection's error (SourceError), not a body that does not decode.
func TestAFailingConnectionIsNotADecodeError(t *testing.T) {
	broken := io.MultiReader(bytes.NewReader([]byte{0x1f}), iotest.ErrReader(syscall.ECONNRESET))
	r, err := contentcoding.NewReader("gzip", broken)
	require.NoError(t, err, "nothing is read before the first Read")
	_, err = io.ReadAll(r)
	require.ErrorIs(t, err, syscall.ECONNRESET)
	require.False(t, contentcoding.IsDecodeError(err))

	good := gzipped(t, bytes.Repeat([]byte("x"), 4096), gzip.BestSpeed, time.Time{})
	r, _ = contentcoding.NewReader("gzip", bytes.NewReader(good[:len(good)/2]))
	_, err = io.ReadAll(r)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut short: truncated, not corrupt")
	require.False(t, contentcoding.IsDecodeError(err))

	r, _ = contentcoding.NewReader("gzip", bytes.NewReader([]byte(`{"not":"gzip"}`)))
	_, err = io.ReadAll(r)
	require.True(t, contentcoding.IsDecodeError(err), "%v", err)
}
