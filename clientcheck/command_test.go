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
