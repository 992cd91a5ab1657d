package mcpstdio_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the servers the tests start (IDEMPROOF_MCPSTDIO_TEST_SERVER).
func TestMain(m *testing.M) {
	switch kind := os.Getenv("IDEMPROOF_MCPSTDIO_TEST_SERVER"); kind {
	case "":
		os.Exit(m.Run())
	case "refunds":
		refundServer()
	case "banner":
		fmt.Println("refund server listening on stdio")
		refundServer()
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: cannot open the refunds database: permission denied")
		os.Exit(3)
	case "hang":
		fmt.Fprintln(os.Stderr, "waiting for a license server")
		select {}
	}
	os.Exit(0)
}

type refundArgs struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

type ledgerOut struct {
	Count int `json:"count"`
}

// refundServer is a go-sdk stdio server: refund (counts per order, no key handling)
// and list_refunds.
func refundServer() {
	var mu sync.Mutex
	count := map[string]int{}
	s := sdk.NewServer(&sdk.Implementation{Name: "test-refunds", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "refund"}, func(_ context.Context, _ *sdk.CallToolRequest, a refundArgs) (*sdk.CallToolResult, ledgerOut, error) {
		mu.Lock()
		defer mu.Unlock()
		count[a.OrderID]++
		return nil, ledgerOut{Count: count[a.OrderID]}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "list_refunds", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, func(_ context.Context, _ *sdk.CallToolRequest, a refundArgs) (*sdk.CallToolResult, ledgerOut, error) {
		mu.Lock()
		defer mu.Unlock()
		return nil, ledgerOut{Count: count[a.OrderID]}, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
	}
}

func serverEnv(kind string) []string { return []string{"IDEMPROOF_MCPSTDIO_TEST_SERVER=" + kind} }
