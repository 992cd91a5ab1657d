package bodytext_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/internal/bodytext"
)

func TestLineShowsJSONAsJSONTextNotEscaped(t *testing.T) {
	got := bodytext.Line([]byte("{\n  \"id\": \"re_35d\",\n  \"amount\": 4900\n}"), 200)
	require.Equal(t, `{"id":"re_35d","amount":4900}`, got)
	require.NotContains(t, got, `\"`)
}

func TestLineClipsByBytesWithAMarker(t *testing.T) {
	got := bodytext.Line([]byte(`{"note":"`+strings.Repeat("é", 100)+`"}`), 20)
	require.True(t, strings.HasPrefix(got, `{"note":"`), got)
	require.Contains(t, got, "more bytes)")
	require.LessOrEqual(t, len(strings.SplitN(got, "…", 2)[0]), 20)
}

func TestLineEscapesControlCharactersOfText(t *testing.T) {
	require.Equal(t, `bad\ngateway\x00`, bodytext.Line([]byte("bad\ngateway\x00"), 100))
	require.Equal(t, bodytext.Empty, bodytext.Line(nil, 100))
}

func TestPrettyIndentsJSON(t *testing.T) {
	require.Equal(t, "{\n  \"id\": \"re_1\",\n  \"amount\": 4900\n}", bodytext.Pretty([]byte(`{"id":"re_1","amount":4900}`), 500))
	require.Equal(t, "line one\nline two", bodytext.Pretty([]byte("line one\nline two"), 500))
}

func TestDiffNamesTheMembersThatDiffer(t *testing.T) {
	changes := bodytext.Diff(
		[]byte(`{"id":"re_a","amount":4900,"meta":{"order":"o1"},"tags":["x"]}`),
		[]byte(`{"id":"re_b","amount":5000,"meta":{"order":"o1","replayed":true},"tags":["x","y"]}`))
	require.Equal(t, "id: \"re_a\" → \"re_b\"; amount: 4900 → 5000; meta.replayed: (absent) → true; tags.1: (absent) → \"y\"",
		bodytext.Summary(changes))
}

func TestDiffOfEqualBodiesIsEmpty(t *testing.T) {
	require.Empty(t, bodytext.Diff([]byte(`{"a":1}`), []byte(`{"a":1}`)))
}

func TestDiffOfRespelledJSONSaysTheMembersAreTheSame(t *testing.T) {
	changes := bodytext.Diff([]byte(`{"a":1,"b":2}`), []byte(`{"a": 1, "b": 2}`))
	require.Len(t, changes, 1)
	require.Contains(t, changes[0].String(), "same members, other bytes")
}

func TestDiffOfTextAndJSONShowsBothBodies(t *testing.T) {
	changes := bodytext.Diff([]byte(`{"id":"re_a"}`), nil)
	require.Equal(t, `body: {"id":"re_a"} → (empty body)`, bodytext.Summary(changes))
	changes = bodytext.Diff([]byte("one\ntwo"), []byte("one\nthree"))
	require.Equal(t, "line 2: two → three", bodytext.Summary(changes))
}

func TestDiffIsBounded(t *testing.T) {
	var a, b strings.Builder
	a.WriteString("{")
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			a.WriteString(",")
			b.WriteString(",")
		}
		a.WriteString(`"k` + string(rune('a'+i%26)) + strings.Repeat("x", i) + `":1`)
		b.WriteString(`"k` + string(rune('a'+i%26)) + strings.Repeat("x", i) + `":2`)
	}
	a.WriteString("}")
	b.WriteString("}")
	changes := bodytext.Diff([]byte(a.String()), []byte(b.String()))
	require.Len(t, changes, 13)
	require.Contains(t, bodytext.Summary(changes), "… 28 more")
}

func TestDiffSaysWhenMembersComeInAnotherOrder(t *testing.T) {
	changes := bodytext.Diff([]byte(`{"id":"re_a","amount":4900}`), []byte(`{"amount":4900,"id":"re_b"}`))
	require.Equal(t, `id: "re_a" → "re_b"; (member order): id, amount → amount, id`, bodytext.Summary(changes))
}
