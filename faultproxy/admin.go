package faultproxy

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// maxAdminBody bounds an admin request body; a rule list is far smaller.
const maxAdminBody = 1 << 20

// JournalPage is the body of GET /journal: at most the query's limit of records, More
// when further ones match (ask again with since = the last record's seq), and the
// journal's totals.
type JournalPage struct {
	Records []Record `json:"records"`
	More    bool     `json:"more"`
	JournalStats
}

// Journal page sizes of GET /journal.
const (
	DefaultJournalPage = 1000
	MaxJournalPage     = 100_000
)

// AdminError is the body of every admin error response.
type AdminError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// AdminHandler serves the admin API:
//
//	GET    /rules           the rules in evaluation order, with how often each fired
//	POST   /rules           add a rule (a JSON object) or several (a JSON array)
//	DELETE /rules/{name}    remove a rule
//	POST   /reset           remove all rules, clear the journal and attempt counters
//	GET    /journal         records; ?key= one key, ?since=N records after sequence N
//	GET    /healthz         {"status":"ok"}
//	GET    /version         {"version":"..."}
//
// With a non-empty token every request needs "Authorization: Bearer <token>". Requests a
// browser made (an Origin or Sec-Fetch-Site header) are refused with 403 so that a web
// page cannot drive a proxy on localhost, and so is a Host the admin API does not answer
// to (see allowedHost: a DNS-rebinding page names its own host there).
func (p *Proxy) AdminHandler(token string) http.Handler {
	return adminHandler(p, newHostSet(p.cfg.AdminAddr, p.cfg.AdminAllowHosts), token)
}

// adminBackend is what the admin API drives: the HTTP proxy, or an Engine under a fault
// layer of another medium.
type adminBackend interface {
	Rules() []RuleStatus
	AddRules(rules ...Rule) error
	DeleteRule(ctx context.Context, name string) error
	Reset(ctx context.Context) error
	JournalStats() JournalStats
	journalPage(q JournalQuery) ([]Record, bool)
}

func adminHandler(b adminBackend, hosts hostSet, token string) http.Handler {
	a := admin{b}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rules", a.listRules)
	mux.HandleFunc("POST /rules", a.addRules)
	mux.HandleFunc("DELETE /rules/{name}", a.deleteRule)
	mux.HandleFunc("POST /reset", a.reset)
	mux.HandleFunc("GET /journal", a.journal)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no admin endpoint %s %s", r.Method, r.URL.Path), "")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" {
			writeError(w, http.StatusForbidden, "browser-originated requests are refused by the admin API", "")
			return
		}
		if !hosts.allowed(r.Host) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("the admin API does not answer to Host %q: use a loopback name or address, the admin listen address, or allow the name with --admin-allow-host (Config.AdminAllowHosts)", r.Host), "")
			return
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="faultproxy"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer <token>)", "")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// writeJSON is the one way the admin API answers.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(AdminError{Error: "encode response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg, field string) {
	writeJSON(w, status, AdminError{Error: msg, Field: field})
}

// admin serves the admin API's endpoints for one backend.
type admin struct{ b adminBackend }

func (a admin) listRules(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.b.Rules())
}

func (a admin) addRules(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if isTimeout(err) {
		writeError(w, http.StatusRequestTimeout, "the request body did not arrive in time: send it whole", "")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error(), "")
		return
	}
	if len(b) > maxAdminBody {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxAdminBody), "")
		return
	}
	rules, err := decodeRulesJSON(b)
	if err != nil {
		writeRuleError(w, err)
		return
	}
	if err := a.b.AddRules(rules...); err != nil { // all or none
		writeRuleError(w, err)
		return
	}
	if len(rules) == 1 && !isArray(b) {
		writeJSON(w, http.StatusCreated, rules[0])
		return
	}
	writeJSON(w, http.StatusCreated, rules)
}

func isArray(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '['
}

// writeRuleError maps a rule error to its status: a name in use is a conflict, anything
// else a bad request naming the field.
func writeRuleError(w http.ResponseWriter, err error) {
	var re *RuleError
	field := ""
	if errors.As(err, &re) {
		field = re.Field
	}
	status := http.StatusBadRequest
	if errors.Is(err, ErrRuleExists) {
		status = http.StatusConflict
	}
	writeError(w, status, err.Error(), field)
}

func (a admin) deleteRule(w http.ResponseWriter, r *http.Request) {
	if err := a.b.DeleteRule(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, http.StatusNotFound, err.Error(), "name")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a admin) reset(w http.ResponseWriter, r *http.Request) {
	a.b.Reset(r.Context())
	w.WriteHeader(http.StatusNoContent)
}

func (a admin) journal(w http.ResponseWriter, r *http.Request) {
	q := JournalQuery{Key: r.URL.Query().Get("key"), Limit: DefaultJournalPage}
	if s := r.URL.Query().Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("since must be a record sequence number (>= 0), got %q", s), "since")
			return
		}
		q.Since = n
	}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxJournalPage {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be 1 to %d records, got %q", MaxJournalPage, s), "limit")
			return
		}
		q.Limit = n
	}
	recs, more := a.b.journalPage(q)
	writeJournalPage(w, recs, more, a.b.JournalStats())
}

// writeJournalPage streams a JournalPage: one record encoded at a time, so a page costs
// the records' copies (shallow) and one record's JSON, not the whole answer in memory.
// It is the one answer that does not go through writeJSON, for that reason.
func writeJournalPage(w http.ResponseWriter, recs []Record, more bool, st JournalStats) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, `{"records":[`)
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			// Mid-answer: cut the connection rather than end a body that looks whole.
			panic(http.ErrAbortHandler)
		}
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(b)
	}
	tail, _ := json.Marshal(struct {
		More bool `json:"more"`
		JournalStats
	}{more, st})
	io.WriteString(w, "],")
	w.Write(tail[1:]) // the object's members after its opening brace
	io.WriteString(w, "\n")
}
