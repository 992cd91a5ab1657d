package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// SEP-3182 puts the key at params.idempotencyKey, a member of tools/call params the go-sdk
// does not know: it decodes params into its own type and drops the member before any
// middleware or tool sees it. So the key is lifted before the SDK decodes the message —
// from the raw line over stdio (liftingTransport), from the raw POST body over HTTP
// (liftKeyOverHTTP) — into a _meta member of this server's own, where the tool reads it.
// The lift first deletes any such member the client sent: the key is read from
// params.idempotencyKey and from nowhere else.

// liftedKey is the _meta member the lift writes (a name no client is meant to send).
const liftedKey = "idemproof/idempotencyKey"

// maxLiftedBody is the largest POST body the HTTP lift reads; a larger one goes to the
// SDK as it came (it refuses bodies of that size anyway), its key unread.
const maxLiftedBody = 4 << 20

// liftParams moves params.idempotencyKey into params._meta[liftedKey], as it was written
// (a key that is not a string stays one, for the tool to refuse as invalid).
func liftParams(params json.RawMessage) json.RawMessage {
	if !gjson.ValidBytes(params) || !gjson.ParseBytes(params).IsObject() {
		return params
	}
	out := []byte(params)
	if gjson.GetBytes(out, "_meta."+liftedKey).Exists() {
		if cleaned, err := sjson.DeleteBytes(out, "_meta."+liftedKey); err == nil {
			out = cleaned
		}
	}
	key := gjson.GetBytes(out, "idempotencyKey")
	if !key.Exists() {
		return out
	}
	meta := gjson.GetBytes(out, "_meta")
	if meta.Exists() && !meta.IsObject() {
		return out // not MCP's _meta: the SDK refuses the call as it is
	}
	lifted, err := sjson.SetRawBytes(out, "_meta."+liftedKey, []byte(key.Raw))
	if err != nil {
		return out
	}
	return lifted
}

// liftMessage lifts the key of a tools/call request given as JSON (a batch, an array of
// messages, message by message).
func liftMessage(body []byte) []byte {
	parsed := gjson.ParseBytes(body)
	switch {
	case parsed.IsArray():
		out := body
		for i, m := range parsed.Array() {
			if m.Get("method").Str != "tools/call" || !m.Get("params").Exists() {
				continue
			}
			if set, err := sjson.SetRawBytes(out, strconv.Itoa(i)+".params", liftParams(json.RawMessage(m.Get("params").Raw))); err == nil {
				out = set
			}
		}
		return out
	case parsed.IsObject() && parsed.Get("method").Str == "tools/call" && parsed.Get("params").Exists():
		if set, err := sjson.SetRawBytes(body, "params", liftParams(json.RawMessage(parsed.Get("params").Raw))); err == nil {
			return set
		}
	}
	return body
}

// liftKeyOverHTTP lifts the key of a tools/call POSTed to next.
func liftKeyOverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxLiftedBody+1))
		if err != nil || len(body) > maxLiftedBody {
			// Unread or too large: the SDK reads the rest and answers it as it would.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		r.Body.Close()
		lifted := liftMessage(body)
		r.Body = io.NopCloser(bytes.NewReader(lifted))
		r.ContentLength = int64(len(lifted))
		next.ServeHTTP(w, r)
	})
}

// liftingTransport lifts the key of every tools/call it reads.
type liftingTransport struct{ sdk.Transport }

func (t liftingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return liftingConn{conn}, nil
}

type liftingConn struct{ sdk.Connection }

func (c liftingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "tools/call" {
		req.Params = liftParams(req.Params)
	}
	return msg, err
}

// advertiseIdempotency adds SEP-3182's capabilities.tools.idempotency to the initialize
// answer, which the SDK's capability types have no member for.
func advertiseIdempotency(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		init, ok := res.(*sdk.InitializeResult)
		if method != "initialize" || err != nil || !ok {
			return res, err
		}
		caps, err := json.Marshal(init.Capabilities)
		if err != nil {
			return res, nil
		}
		if caps, err = sjson.SetRawBytes(caps, "tools.idempotency", []byte("{}")); err != nil {
			return res, nil
		}
		out := &advertisedInitialize{Capabilities: caps, Instructions: init.Instructions,
			ProtocolVersion: init.ProtocolVersion, ServerInfo: init.ServerInfo}
		out.Meta = init.Meta
		return out, nil
	}
}

// advertisedInitialize is sdk.InitializeResult with its capabilities as JSON.
type advertisedInitialize struct {
	sdk.ResultBase
	Capabilities    json.RawMessage     `json:"capabilities"`
	Instructions    string              `json:"instructions,omitempty"`
	ProtocolVersion string              `json:"protocolVersion"`
	ServerInfo      *sdk.Implementation `json:"serverInfo"`
}
