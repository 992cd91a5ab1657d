package reference

import (
	"context"
	"net/http"
	"strings"

	"github.com/idemproof/idemproof/reference/idempotency"
)

// Anonymous is the principal of a request without credentials in open mode.
const Anonymous = "anonymous"

type principalKey struct{}

func principalOf(r *http.Request) string {
	if p, ok := r.Context().Value(principalKey{}).(string); ok {
		return p
	}
	return Anonymous
}

// authenticate resolves the principal: open mode names it after the bearer token,
// token mode accepts only configured tokens.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		token, isBearer := strings.CutPrefix(auth, "Bearer ")
		token = strings.TrimSpace(token)
		var principal string
		switch {
		case auth == "" && s.cfg.tokens == nil:
			principal = Anonymous
		case auth == "":
			unauthorized(w, "send Authorization: Bearer <token> with one of the server's tokens")
			return
		case !isBearer || token == "":
			unauthorized(w, "the Authorization header must be 'Bearer <token>'")
			return
		case token == Anonymous:
			// Reserved: a token must not act as the principal of unauthenticated requests.
			unauthorized(w, "the token \""+Anonymous+"\" is reserved for requests without credentials; use another token")
			return
		case s.cfg.tokens != nil && !s.cfg.tokens[token]:
			unauthorized(w, "the bearer token is not one of the server's tokens")
			return
		default:
			principal = token
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, principal)))
	})
}

func unauthorized(w http.ResponseWriter, detail string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="idemproof"`)
	idempotency.WriteProblem(w, http.StatusUnauthorized, "unauthorized", "Unauthorized", detail)
}
