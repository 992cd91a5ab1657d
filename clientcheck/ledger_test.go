package clientcheck_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/profile"
)

// awsStyleServer is a refund API in AWS's JSON protocol: every call a POST / named by
// X-Amz-Target, the token a body member, the ledger a ListRefunds call whose body names
// the order, and its rate limit a 400 ThrottlingException. The first throttled ledger
// reads are refused.
func awsStyleServer(t *testing.T, throttled int) (*httptest.Server, func() int) {
	var mu sync.Mutex
	stored, effects, refused := map[string][]byte{}, map[string]int{}, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		order := gjson.GetBytes(body, "OrderId").String()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		mu.Lock()
		defer mu.Unlock()
		switch r.Header.Get("X-Amz-Target") {
		case "RefundService.ListRefunds":
			if order == "" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"__type":"ValidationException","message":"OrderId is required"}`)
				return
			}
			if refused < throttled {
				refused++
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
				return
			}
			fmt.Fprintf(w, `{"Refunds":[%s]}`, strings.TrimSuffix(strings.Repeat(`{},`, effects[order]), ","))
		case "RefundService.CreateRefund":
			token := gjson.GetBytes(body, "ClientToken").String()
			if out, ok := stored[token]; ok && token != "" {
				w.Write(out)
				return
			}
			effects[order]++
			out := []byte(fmt.Sprintf(`{"Refund":{"OrderId":%q,"State":"completed"}}`, order))
			stored[token] = out
			w.Write(out)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"UnknownOperationException"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return refused }
}

const awsStyleProfile = `name: aws-refunds
base_url: %s
key_field: ClientToken
operation:
  method: POST
  path: /
  headers: {X-Amz-Target: RefundService.CreateRefund, Content-Type: application/x-amz-json-1.1}
  body: '{"OrderId": "{{.Entity}}", "Amount": 4900}'
side_effects:
  method: POST
  path: /
  headers: {X-Amz-Target: RefundService.ListRefunds, Content-Type: application/x-amz-json-1.1}
  body: '{"OrderId": "{{.Entity}}"}'
  count: Refunds.#
outcomes:
  throttled: {status: 400, json: {path: __type, equals: ThrottlingException}}
expect: { in_flight: 409, mismatch: 400, missing_key: optional }
`

// client-check reads a ledger as check does: a POST with the probe's body and headers,
// and a rate limit's refusal that the profile's throttled: rule names (a 400) is waited
// out, not taken for a target that is down.
func TestTheLedgerIsReadWithItsBodyAndThrottlesAreWaitedOut(t *testing.T) {
	srv, refused := awsStyleServer(t, 2)
	p, err := profile.Parse("aws.yaml", []byte(fmt.Sprintf(awsStyleProfile, srv.URL)))
	require.NoError(t, err)
	client := func(ctx context.Context, env clientcheck.Env) error {
		c := &http.Client{Timeout: 2 * time.Second}
		for _, order := range []string{"o-1", "o-2"} {
			for range 3 {
				body := strings.ReplaceAll(env.OperationBody, "{{.Entity}}", order)
				body = strings.Replace(body, `"Amount"`, `"ClientToken": "tok-`+order+`", "Amount"`, 1)
				req, _ := http.NewRequestWithContext(ctx, env.OperationMethod, env.OperationURL, strings.NewReader(body))
				req.Header.Set("X-Amz-Target", "RefundService.CreateRefund")
				if resp, err := c.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						break
					}
				}
			}
		}
		return nil
	}
	res, err := clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 60 * time.Second}, client)
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, map[string]int{"o-1": 1, "o-2": 1}, res.Observation.Ledger)
	require.Equal(t, 2, refused(), "both throttled reads were answered, and read again")

	// A ledger read the target refuses for good is named as such, with what it said.
	p.SideEffects.Body = `{"Order": "{{.Entity}}"}`
	_, err = clientcheck.Run(context.Background(), clientcheck.Config{Profile: p, FaultSpec: "503", Seed: 1, Timeout: 60 * time.Second}, client)
	require.ErrorContains(t, err, "refused the ledger read")
	require.ErrorContains(t, err, `answered 400: {"__type":"ValidationException","message":"OrderId is required"}`)
}
