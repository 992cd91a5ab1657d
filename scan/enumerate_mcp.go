package scan

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/idemproof/idemproof/transport"
	mcptr "github.com/idemproof/idemproof/transport/mcp"
)

// maxTools bounds how many tools one scan lists.
const maxTools = 2000

// enumerateMCP lists an MCP server's tools over Streamable HTTP: its initialize answer as
// written (for capabilities.tools.idempotency, which the SDK's types do not carry), then
// tools/list through the official go-sdk client, every page. No tool is called.
func enumerateMCP(ctx context.Context, cfg *Config) (*Target, error) {
	endpoint := cfg.MCP
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--mcp %q: want the server's Streamable HTTP endpoint, an http(s) URL such as http://127.0.0.1:8091/mcp", endpoint)
	}
	header := callHeader(cfg)
	tr := &mcptr.Transport{Client: transport.NewAttemptClient(cfg.TLS)}
	sess, err := tr.Initialize(ctx, endpoint, header)
	if err != nil {
		return nil, fmt.Errorf("cannot scan %s: %w", endpoint, err)
	}
	sess.Close(ctx)
	t := &Target{Kind: KindMCP, Source: endpoint, Endpoint: endpoint, Idempotency: sess.AdvertisesIdempotency()}
	if info := sess.Result.ServerInfo; info != nil {
		t.Server = strings.TrimSpace(info.Name + " " + info.Version)
	}

	excluded := &excludedTools{}
	client := sdk.NewClient(&sdk.Implementation{Name: "idemproof-scan", Version: "1"}, &sdk.ClientOptions{Logger: slog.New(excluded)})
	base := http.RoundTripper(transport.NewProbeClient(0, cfg.TLS).Transport)
	if base == nil {
		base = http.DefaultTransport
	}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: mcptr.HeaderRoundTripper{Base: base, Header: header}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot scan %s: connect for tools/list: %w", endpoint, err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("cannot scan %s: tools/list: %w", endpoint, err)
		}
		if len(t.Operations) == maxTools {
			t.Notes = append(t.Notes, fmt.Sprintf("the server lists more than %d tools: the scan takes the first %d", maxTools, maxTools))
			break
		}
		t.Operations = append(t.Operations, toolOperation(tool, t.Idempotency))
	}
	t.Notes = append(t.Notes, excluded.notes()...)
	return t, nil
}

// toolOperation is what tools/list says of one tool.
func toolOperation(tool *sdk.Tool, capability bool) *Operation {
	op := &Operation{Name: tool.Name, Description: tool.Description}
	if op.Description == "" {
		op.Description = tool.Title
	}
	if a := tool.Annotations; a != nil {
		op.Annotations = &Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
		op.ReadOnly = a.ReadOnlyHint
		op.Destructive = !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint
		if a.IdempotentHint && !a.ReadOnlyHint {
			op.IdempotentClaim = "idempotentHint: true"
		}
	}
	input, err := readToolSchema(tool.InputSchema)
	if err != nil {
		op.Problem = "its input schema cannot be read: " + err.Error()
	}
	op.src = &source{input: input}
	op.Inputs = inputs(input, "argument", nil)
	op.Key = toolKey(tool.Description, input, tool.Meta, capability)
	if op.Problem == "" {
		op.Request, op.Problem = schemaRequest(op, input)
	}
	return op
}

// excludedTools collects what the SDK's client logs when it leaves a tool out of
// tools/list (a tool whose x-mcp-header annotations it finds invalid): a scan says so
// instead of losing the tool silently.
type excludedTools struct {
	mu    sync.Mutex
	lines []string
}

func (e *excludedTools) Enabled(context.Context, slog.Level) bool { return true }
func (e *excludedTools) WithAttrs([]slog.Attr) slog.Handler       { return e }
func (e *excludedTools) WithGroup(string) slog.Handler            { return e }

func (e *excludedTools) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "excluding") {
		return nil
	}
	line := "the go-sdk client left a tool out of tools/list: " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	e.mu.Lock()
	e.lines = append(e.lines, line)
	e.mu.Unlock()
	return nil
}

func (e *excludedTools) notes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}
