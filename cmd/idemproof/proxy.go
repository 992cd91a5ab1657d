package main

import (
	"context"
	"errors"
	"io"
)

// runProxy is a placeholder until its package lands; it is replaced, not extended.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("not implemented yet")
}
