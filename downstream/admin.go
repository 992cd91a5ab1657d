package downstream

import (
	"encoding/json"
	"net/http"
)

// AdminHandler serves the sink's own API, for a sink running in another process (a
// container): what it recorded and the fault rules. It is served on its own listener,
// never on the vendor's, so the target's calls cannot reach it.
//
//	GET    /calls?entity=E   {"calls":[Call...],"ledger":Ledger,"dropped":N} (every call without entity)
//	POST   /rules            a Rule as JSON
//	DELETE /rules?entity=E   removes the entity's rules
func (s *Sink) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, r *http.Request) {
		var calls []Call
		dropped := 0
		if e, ok := r.URL.Query()["entity"]; ok {
			calls = s.Calls(e[0])
		} else {
			calls, dropped = s.All()
		}
		if calls == nil {
			calls = []Call{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"calls": calls, "ledger": LedgerOf(calls), "dropped": dropped})
	})
	mux.HandleFunc("POST /rules", func(w http.ResponseWriter, r *http.Request) {
		var rule Rule
		if err := json.NewDecoder(r.Body).Decode(&rule); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want a rule as JSON: {\"entity\":\"o1\",\"nth\":1,\"fault\":\"503-after\"}: " + err.Error()})
			return
		}
		if err := s.AddRule(rule); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusCreated, rule)
	})
	mux.HandleFunc("DELETE /rules", func(w http.ResponseWriter, r *http.Request) {
		s.RemoveRules(r.URL.Query().Get("entity"))
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}
