package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/idemproof/idemproof/faultproxy/stdio"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// stdioCommand is the stdio server's command of a scan: its argv, in the folder given (the
// current one by default), made absolute so that a written profile starts the same server
// from wherever it is checked.
func stdioCommand(cfg *Config) (stdio.Command, error) {
	dir := cfg.MCPDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return stdio.Command{}, fmt.Errorf("--mcp-command: the working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return stdio.Command{}, fmt.Errorf("--mcp-command: %w", err)
	}
	return stdio.Command{Args: append([]string(nil), cfg.MCPCommand...), Dir: abs}, nil
}

// enumerateMCPStdio starts an MCP server by its command and lists its tools over its stdin
// and stdout (transport/mcpstdio): its initialize answer as written (for
// capabilities.tools.idempotency), then tools/list, every page; then stops it. No tool is
// called. A server that cannot be started, exits at start, writes something that is not
// JSON-RPC to its stdout or does not answer is an error with its stderr's tail, and no
// process of it is left.
func enumerateMCPStdio(ctx context.Context, cfg *Config) (*Target, error) {
	cmd, err := stdioCommand(cfg)
	if err != nil {
		return nil, err
	}
	c, err := mcpstdio.Start(ctx, cmd, mcpstdio.Options{ClientName: "idemproof-scan", StartTimeout: cfg.StartTimeout})
	var se *mcpstdio.StartError
	switch {
	case errors.As(err, &se):
		if errors.Is(err, stdio.ErrNotFound) {
			se.What = fmt.Sprintf("%q was not found (check the command after --mcp-command -- and the PATH)", cmd.Args[0])
		}
		return nil, fmt.Errorf("cannot scan: %w", err)
	case err != nil:
		return nil, fmt.Errorf("cannot scan the stdio server %s: %w", cmd, err)
	}
	defer c.Close()
	t := &Target{Kind: KindMCP, Source: cmd.String(), Command: cmd.Args, Dir: cmd.Dir,
		Idempotency: gjson.GetBytes(c.Raw, "capabilities.tools.idempotency").Exists()}
	if info := c.Result.ServerInfo; info != nil {
		t.Server = strings.TrimSpace(info.Name + " " + info.Version)
	}
	listCtx, cancel := context.WithTimeout(ctx, cfg.operationTimeout())
	defer cancel()
	tools, err := c.ListTools(listCtx)
	if err != nil {
		return nil, fmt.Errorf("cannot scan the stdio server %s: %w%s", cmd, err, exitNote(c))
	}
	if len(tools) > maxTools {
		t.Notes = append(t.Notes, fmt.Sprintf("the server lists more than %d tools: the scan takes the first %d", maxTools, maxTools))
		tools = tools[:maxTools]
	}
	for _, tool := range tools {
		t.Operations = append(t.Operations, toolOperation(tool, t.Idempotency))
	}
	return t, nil
}

// exitNote says how the server ended, when it did (with its stderr's tail).
func exitNote(c *mcpstdio.Client) string {
	select {
	case <-c.Done():
		return " (" + c.Exit() + ")"
	default:
		return ""
	}
}
