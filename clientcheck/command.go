package clientcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// commandWaitDelay is how long a finished or killed command's output pipes may stay open
// (a grandchild holding them) before Wait gives up on them.
const commandWaitDelay = 2 * time.Second

// Command runs argv as the code under test, in any language: the Env is exported as
// IDEMPROOF_BASE_URL, IDEMPROOF_ADMIN_URL, IDEMPROOF_OUTCOME_FILE,
// IDEMPROOF_KEY_HEADER and the rest of Env.Vars, TMPDIR included, on top of the current
// environment; its output goes to stdout and stderr. A non-zero exit, or the timeout (which kills its whole process group), is its
// error.
func Command(argv []string, stdout, stderr io.Writer) ClientFunc {
	return func(ctx context.Context, env Env) error {
		if len(argv) == 0 {
			return errors.New("no command: give the client to run after --")
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env.Vars()...)
		cmd.Stdin = nil
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = commandWaitDelay
		killProcessGroupOnCancel(cmd)
		err := cmd.Run()
		if ctx.Err() != nil {
			return fmt.Errorf("%s: killed at the timeout: %w", argv[0], ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	}
}
