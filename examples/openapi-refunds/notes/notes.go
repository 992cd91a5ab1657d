// Package notes is the openapi-refunds example's server: the reference refund server
// (keyed refunds and invoices, done right) with a notes API beside it that takes no
// idempotency key (openapi.yaml):
//
//	POST   /v1/notes       adds a note: a repeat adds another
//	PUT    /v1/notes/{id}  replaces a note's text, keeping each write as a revision with an
//	                       id of its own: idempotent by its method, not in what it stores
//	DELETE /v1/notes/{id}  deletes a note
//
// Writes counts the notes API's writes, so tests can hold a scan to what it did.
package notes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/idemproof/idemproof/reference"
)

// Server is the reference server with the notes API.
type Server struct {
	ref *reference.Server

	mu     sync.Mutex
	next   int
	writes map[string]int // "POST", "PUT", "DELETE" → writes made
}

// New starts the reference server (memory store) behind the notes API.
func New() (*Server, error) {
	ref, err := reference.New()
	if err != nil {
		return nil, err
	}
	return &Server{ref: ref, writes: map[string]int{}}, nil
}

// Close stops the reference server's background work.
func (s *Server) Close() error { return s.ref.Close() }

// Writes is how many writes of a method the notes API made.
func (s *Server) Writes(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[method]
}

// Handler serves the notes API and, for every other path, the reference server.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", s.ref)
	mux.HandleFunc("POST /v1/notes", func(w http.ResponseWriter, r *http.Request) {
		s.write(w, r, http.StatusCreated, "")
	})
	mux.HandleFunc("PUT /v1/notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.write(w, r, http.StatusOK, r.PathValue("id"))
	})
	mux.HandleFunc("DELETE /v1/notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.writes[r.Method]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, status int, id string) {
	var in struct {
		OrderID string `json:"order_id"`
		Text    string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.OrderID == "" {
		http.Error(w, `{"detail":"a JSON body with order_id and text"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.next++
	s.writes[r.Method]++
	if id == "" {
		id = fmt.Sprintf("note_%06d", s.next)
	}
	out := map[string]string{"id": id, "revision_id": fmt.Sprintf("rev_%06d", s.next), "order_id": in.OrderID, "text": in.Text}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(out)
}
