package scan

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/internal/bodytext"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
)

// describe says what an answer was, in one short phrase: "201", "422 (key reused with
// another payload)", "JSON-RPC error -32011 (key reused)", "a tool error (declined)".
func describe(kind Kind, a transport.Answer) string {
	if a.Class == outcome.Info {
		return "no answer (" + a.Err + ")"
	}
	return describeStatus(kind, a.Status, a.Body)
}

func describeStatus(kind Kind, status int, body []byte) string {
	if kind == KindMCP && status == http.StatusOK {
		switch {
		case gjson.GetBytes(body, "error").Exists():
			return "JSON-RPC error " + gjson.GetBytes(body, "error.code").Raw + " (" + clipText(gjson.GetBytes(body, "error.message").String()) + ")"
		case gjson.GetBytes(body, "result.isError").Bool():
			return "a tool error (" + clipText(toolText(body)) + ")"
		case gjson.GetBytes(body, "result").Exists():
			return "a result"
		}
	}
	s := strconv.Itoa(status)
	if detail := problemText(body); detail != "" && (status < 200 || status > 299) {
		s += " (" + clipText(detail) + ")"
	}
	return s
}

// toolText is the first text content of a tool result.
func toolText(body []byte) string {
	return gjson.GetBytes(body, `result.content.#(type=="text").text`).String()
}

// problemText is what an HTTP refusal says: an RFC 9457 problem's detail or title, a
// JSON error's message, else the body's text.
func problemText(body []byte) string {
	for _, path := range []string{"detail", "title", "message", "error.message", "error"} {
		if v := gjson.GetBytes(body, path); v.Exists() && v.Type == gjson.String && v.String() != "" {
			return v.String()
		}
	}
	return bodytext.Line(body, 60)
}

func clipText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// inFlightText is how a refusal says the original still runs.
var inFlightText = regexp.MustCompile(`(?i)in[ -]?flight|in progress|still (running|processing)|retry (later|after)|already (running|processing)|concurrent`)

// looksInFlight reports whether a refusal says "still running, retry": an HTTP 409 or
// 425, a Retry-After on a 4xx or 503, or a refusal whose message says so (MCP servers
// answer in-flight repeats with JSON-RPC errors of their own codes).
func looksInFlight(kind Kind, a transport.Answer) bool {
	switch {
	case a.Class == outcome.Success || a.Class == outcome.Info:
		return false
	case a.Class == outcome.InFlight || a.Status == http.StatusConflict || a.Status == http.StatusTooEarly:
		return true
	case a.Header.Get("Retry-After") != "" && (a.Status == http.StatusServiceUnavailable || (a.Status >= 400 && a.Status < 500)):
		return true
	}
	text := problemText(a.Body)
	if kind == KindMCP {
		text = gjson.GetBytes(a.Body, "error.message").String() + " " + toolText(a.Body)
	}
	return inFlightText.MatchString(text)
}

// retryWait is how long to wait before retrying an in-flight answer: its Retry-After (in
// seconds) or its JSON-RPC error's retry_after_ms / retry_after, at most maxRetryWait;
// else 200 ms.
func retryWait(a transport.Answer) time.Duration {
	d := 200 * time.Millisecond
	if s, err := strconv.Atoi(strings.TrimSpace(a.Header.Get("Retry-After"))); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if ms := gjson.GetBytes(a.Body, "error.data.retry_after_ms"); ms.Exists() {
		d = time.Duration(ms.Float() * float64(time.Millisecond))
	} else if sec := gjson.GetBytes(a.Body, "error.data.retry_after"); sec.Exists() {
		d = time.Duration(sec.Float() * float64(time.Second))
	}
	return min(max(d, 20*time.Millisecond), maxRetryWait)
}

// maxRetryWait bounds one wait before an in-flight retry: a scan is brief.
const maxRetryWait = 2 * time.Second
