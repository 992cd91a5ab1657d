package clientcheck_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
)

func TestCommandSeesTheEnvironment(t *testing.T) {
	var out bytes.Buffer
	env := clientcheck.Env{BaseURL: "http://127.0.0.1:1", OutcomeFile: "/tmp/x.jsonl", KeyHeader: "Idempotency-Key"}
	run := clientcheck.Command([]string{"sh", "-c", `echo "$IDEMPROOF_BASE_URL $IDEMPROOF_OUTCOME_FILE $IDEMPROOF_KEY_HEADER"`}, &out, os.Stderr)
	require.NoError(t, run(context.Background(), env))
	require.Equal(t, "http://127.0.0.1:1 /tmp/x.jsonl Idempotency-Key\n", out.String())
}

func TestCommandExitStatusIsItsError(t *testing.T) {
	run := clientcheck.Command([]string{"sh", "-c", "exit 3"}, os.Stdout, os.Stderr)
	require.ErrorContains(t, run(context.Background(), clientcheck.Env{}), "sh: exit status 3")
}

func TestCommandIsKilledAtTheTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	run := clientcheck.Command([]string{"sh", "-c", "sleep 30 & wait"}, os.Stdout, os.Stderr)
	require.ErrorContains(t, run(ctx, clientcheck.Env{}), "killed at the timeout")
}

func TestCommandNeedsArguments(t *testing.T) {
	require.ErrorContains(t, clientcheck.Command(nil, os.Stdout, os.Stderr)(context.Background(), clientcheck.Env{}), "no command")
}

// The client's TMPDIR overrides the one it inherits (the last value of a name wins).
func TestCommandGetsItsOwnTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", "/inherited")
	var out bytes.Buffer
	run := clientcheck.Command([]string{"sh", "-c", `echo "$TMPDIR"`}, &out, os.Stderr)
	require.NoError(t, run(context.Background(), clientcheck.Env{TempDir: "/the/clients/own"}))
	require.Equal(t, "/the/clients/own\n", out.String())
}

func TestVarsLeaveOutWhatDoesNotApply(t *testing.T) {
	env := clientcheck.Env{BaseURL: "http://127.0.0.1:1", KeyField: "params.key", OperationMethod: "POST",
		OperationURL: "http://127.0.0.1:1/rpc", OperationBody: `{"id":"{{.Entity}}"}`, Entity: "json:id", MCPEndpoint: "http://127.0.0.1:1/rpc"}
	require.Equal(t, []string{
		"IDEMPROOF_BASE_URL=http://127.0.0.1:1",
		"IDEMPROOF_KEY_FIELD=params.key",
		"IDEMPROOF_OPERATION_METHOD=POST",
		"IDEMPROOF_OPERATION_URL=http://127.0.0.1:1/rpc",
		`IDEMPROOF_OPERATION_BODY={"id":"{{.Entity}}"}`,
		"IDEMPROOF_ENTITY=json:id",
		"IDEMPROOF_MCP_ENDPOINT=http://127.0.0.1:1/rpc",
	}, env.Vars())
}
