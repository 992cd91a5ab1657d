package mcpstdio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/outcome"
	"github.com/idemproof/idemproof/transport"
	"github.com/idemproof/idemproof/transport/mcp"
)

// Transport is the catalogue's transport to a stdio server: every attempt is one
// tools/call on the target's one connection, as an agent host keeps one server process
// and sends its calls over one pipe; the ledger is a tool call on it too. When the
// server exits (a fault killed it), the next attempt or ledger read starts it again
// (Dial) and initializes anew, as a host restarts a crashed server.
//
// An attempt's answer is the JSON-RPC response line with the attempt's id, without the
// id ({"result":…} or {"error":…}), status 200; an attempt that gets none — the line
// dropped, held past the timeout, cut (not JSON), or the server gone — is Info with why.
// The request's headers go to the fault layer as attributes its rules match on (a step
// marker); the server never sees them.
type Transport struct {
	// Command starts the server when Dial is nil (the preflight, a run without faults).
	Command stdio.Command
	// Dial, when set, connects through the fault layer (faultproxy/stdio Layer.Connect).
	Dial func() (Conn, error)
	// Tool is the tools/call name when Frame is given none.
	Tool string
	// Classifier classifies complete answers; nil: mcp.DefaultOutcomes over outcome.Statuses{}.
	Classifier outcome.Classifier
	// Options of every session (protocol version, start timeout).
	Options Options

	mu     sync.Mutex
	client *Client
}

var _ transport.Transport = (*Transport)(nil)

func (t *Transport) classifier() outcome.Classifier {
	if t.Classifier == nil {
		return outcome.NewRules(mcp.DefaultOutcomes(nil), outcome.Statuses{})
	}
	return t.Classifier
}

// Frame implements transport.Transport: a tools/call request of the tool with the
// arguments, as over Streamable HTTP.
func (t *Transport) Frame(tool string, args []byte) ([]byte, error) {
	return (&mcp.Transport{Tool: t.Tool}).Frame(tool, args)
}

// Comparable implements transport.Transport: the response without its id.
func (t *Transport) Comparable(body []byte, _ string) []byte {
	if !gjson.ValidBytes(body) {
		return nil
	}
	return mcp.ResponseBody(body)
}

// Session returns the target's session, starting (or restarting) the server when there
// is none or its server has exited.
func (t *Transport) Session(ctx context.Context) (*Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != nil {
		select {
		case <-t.client.Done():
			t.client.Close()
			t.client = nil
		default:
			return t.client, nil
		}
	}
	var c *Client
	var err error
	if t.Dial == nil {
		c, err = Start(ctx, t.Command, t.Options)
	} else {
		var conn Conn
		if conn, err = t.Dial(); err == nil {
			c, err = Connect(ctx, conn, t.Options)
			var se *StartError
			if errors.As(err, &se) {
				se.Command = t.Command.String()
			}
		}
	}
	if err != nil {
		return nil, err
	}
	t.client = c
	return c, nil
}

// Close stops the server, if one runs.
func (t *Transport) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != nil {
		t.client.Close()
		t.client = nil
	}
}

// Open implements transport.Transport: the attempts share the target's connection.
func (t *Transport) Open() transport.Sender { return sender{t} }

type sender struct{ t *Transport }

func (s sender) Close() {}

// Send implements transport.Sender.
func (s sender) Send(ctx context.Context, req *transport.Request, timeout time.Duration) (transport.Answer, error) {
	c, err := s.t.Session(ctx)
	if err != nil {
		return transport.Answer{}, err
	}
	attrs := map[string]string{}
	for k, v := range req.Header {
		if len(v) > 0 && !strings.EqualFold(k, "Content-Type") {
			attrs[k] = v[0]
		}
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A message is one line: a respelling's line breaks become spaces, whitespace still
	// (JSON strings hold none unescaped).
	body := bytes.ReplaceAll(req.Body, []byte{'\n'}, []byte{' '})
	line, sent, err := c.SendRaw(actx, body, attrs)
	a := transport.Answer{RPCMethod: "tools/call"}
	if sent != nil {
		sum := sha256.Sum256(sent)
		a.RequestSHA256 = hex.EncodeToString(sum[:])
		a.RPCID = gjson.GetBytes(sent, "id").Raw
	}
	switch {
	case err == nil:
		a.Status, a.Body = http.StatusOK, mcp.ResponseBody(line)
		a.Class = s.t.classifier().Classify(outcome.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: a.Body})
	case errors.Is(err, ErrServerExited):
		a.Class, a.Err = outcome.Info, "closed: "+err.Error()
	case errors.Is(err, ErrNoAnswer) && ctx.Err() == nil:
		a.Class, a.Err = outcome.Info, transport.TimedOut
		if strings.Contains(err.Error(), "not a JSON-RPC message") {
			a.Err = "truncated: " + strings.TrimPrefix(err.Error(), ErrNoAnswer.Error()+": ")
		}
	case errors.Is(err, ErrNoAnswer):
		a.Class, a.Err = outcome.Info, transport.TimedOut
	default:
		return transport.Answer{}, err
	}
	return a, nil
}

// Count implements transport.Transport: the ledger tool called on the target's
// connection, its result as {"result": …} under the count path.
func (t *Transport) Count(ctx context.Context, l transport.Ledger) (int, error) {
	if l.Tool == "" {
		return 0, errors.New("read ledger: over stdio the ledger is a tool (side_effects.tool)")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := t.Session(ctx)
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	var args json.RawMessage
	if len(l.Arguments) > 0 {
		args = l.Arguments
	}
	res, line, err := c.CallTool(ctx, l.Tool, args, nil)
	var rpc *RPCError
	if errors.As(err, &rpc) {
		if t.classifier().Classify(outcome.Answer{Status: http.StatusOK, Body: mcp.ResponseBody(line)}) == outcome.Throttled {
			return 0, &transport.RateLimitedError{What: "tool " + l.Tool, Detail: fmt.Sprintf("%d %s", rpc.Code, rpc.Message)}
		}
	}
	if err != nil {
		return 0, fmt.Errorf("read ledger: %w", err)
	}
	if res.IsError {
		return 0, fmt.Errorf("read ledger: tool %s answered an error: %.200s", l.Tool, line)
	}
	return transport.Count(mcp.ResponseBody(line), l.Count)
}
