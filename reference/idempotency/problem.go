package idempotency

import (
	"encoding/json"
	"net/http"
)

// ProblemBase prefixes every problem type this project answers with.
const ProblemBase = "https://idemproof.dev/problems/"

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// ProblemBody renders a problem; slug is appended to ProblemBase.
func ProblemBody(status int, slug, title, detail string) []byte {
	b, _ := json.Marshal(Problem{Type: ProblemBase + slug, Title: title, Status: status, Detail: detail})
	return b
}

// WriteProblem answers with an application/problem+json body.
func WriteProblem(w http.ResponseWriter, status int, slug, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(ProblemBody(status, slug, title, detail))
}
