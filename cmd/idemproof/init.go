package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/idemproof/idemproof/internal/profileinit"
	"github.com/idemproof/idemproof/profile"
)

// runInit is `idemproof init`: a starter profile from an OpenAPI operation, or a
// commented template.
func runInit(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("init", "[--openapi SPEC --operation ID] [--out profile.yaml]",
		"Writes a starter target profile: from one operation of an OpenAPI 3.0 or 3.1 document (JSON or\n"+
			"YAML), or, without --openapi, a commented template. Every guess is marked \"# guess:\";\n"+
			"confirm them, then run idemproof check --profile FILE.", stderr)
	spec := fs.String("openapi", "", "the OpenAPI document (a file)")
	operation := fs.String("operation", "", "the operationId of the keyed operation (default: the one operation declaring an idempotency header)")
	out := fs.String("out", "-", "where to write the profile; - is stdout")
	force := fs.Bool("force", false, "overwrite --out if it exists")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: the document is given with --openapi", fs.Arg(0))
	}
	if *operation != "" && *spec == "" {
		return errors.New("--operation needs --openapi (the document the operation is in)")
	}
	text := []byte(profileinit.Template)
	if *spec != "" {
		f, err := os.Open(*spec)
		if err != nil {
			return fmt.Errorf("--openapi: %w", err)
		}
		f.Close()
		// From the file, so its $refs to other local files are followed, as scan does.
		text, err = profileinit.FromOpenAPIFile(*spec, profileinit.Options{Operation: *operation, Source: *spec})
		if err != nil {
			return fmt.Errorf("--openapi %s: %w", *spec, err)
		}
	}
	// What init writes must load: a profile that fails here is a bug of init's.
	if _, err := profile.Parse("generated profile", text); err != nil {
		return fmt.Errorf("the written profile does not load (please report it): %w", err)
	}
	if *out == "-" {
		_, err := stdout.Write(text)
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(*out, flags, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("--out %s exists: pick another file or add --force", *out)
		}
		return fmt.Errorf("--out: %w", err)
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return fmt.Errorf("--out: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(stderr, "wrote %s; review the \"# guess:\" lines, then: idemproof check --profile %s\n", *out, *out)
	return nil
}
