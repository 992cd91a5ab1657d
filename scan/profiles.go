package scan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/idemproof/idemproof/internal/profileinit"
	"github.com/idemproof/idemproof/profile"
	"github.com/idemproof/idemproof/transport/mcpstdio"
)

// WriteProfiles writes a starter profile for every probed operation into dir (created if
// missing), one file each, named after the operation: an MCP tool's from what the scan
// learned of it (internal/profileinit.FromMCPTool: the key's place, the arguments, the
// ledger, the refusals seen, the per-execution value), an HTTP operation's as idemproof
// init --openapi writes it, with the per-execution value and the base URL the scan used.
// A file that exists is never overwritten (it may hold a person's edits). It returns the
// paths written and an error per operation that could not be written; the rest go on.
func WriteProfiles(dir string, rep *Report, cfg *Config) ([]string, []error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, []error{fmt.Errorf("--write-profiles %s: %w", dir, err)}
	}
	var paths []string
	var errs []error
	for _, r := range rep.Rows {
		op := r.Operation
		if !op.Probed() {
			continue
		}
		text, err := starterProfile(rep.Target, r, cfg)
		if err == nil {
			// What is written must load: one that does not is a bug of the writer's.
			_, err = profile.Parse(op.Name+" profile", text)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op.Name, err))
			continue
		}
		path := filepath.Join(dir, fileName(op.Name)+".yaml")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			errs = append(errs, fmt.Errorf("%s: %s exists (it may hold your edits): remove it, or write into another folder", op.Name, path))
			continue
		}
		if err == nil {
			_, err = f.Write(text)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op.Name, err))
			continue
		}
		paths = append(paths, path)
	}
	return paths, errs
}

func starterProfile(t *Target, r Row, cfg *Config) ([]byte, error) {
	op := r.Operation
	unique := r.PerExecution
	if strings.Contains(unique, jsonText) {
		unique = "" // inside a text content: no profile path reads it
	}
	if t.Kind == KindOpenAPI {
		return profileinit.FromOpenAPIFile(cfg.OpenAPI, profileinit.Options{Method: op.Method, Path: op.Path, Source: filepath.Base(cfg.OpenAPI), BaseURL: t.Endpoint, UniqueField: unique})
	}
	tool := profileinit.Tool{Endpoint: t.Endpoint, Command: t.Command, Dir: t.Dir, StartTimeout: declaredStart(cfg.StartTimeout), Server: t.Server, Name: op.Name, Description: op.Description,
		Schema: op.src.input, UniqueField: unique, Capability: t.Idempotency}
	if err := json.Unmarshal([]byte(op.Request.Body), &tool.Arguments); err != nil && op.Request.Body != "" {
		return nil, fmt.Errorf("its arguments: %w", err)
	}
	if c := op.Request.Change; c != nil {
		if err := json.Unmarshal([]byte(c.Body), &tool.Changed); err != nil {
			return nil, fmt.Errorf("its changed arguments: %w", err)
		}
	}
	switch k := op.Key; {
	case k == nil:
		tool.KeyField, tool.KeyWhy = "params._meta.idempotency_key", "guess: the scan found no key; name where the tool reads one"
	case k.Place == PlaceHeader:
		tool.KeyHeader, tool.KeyWhy = k.Name, "idemproof scan: "+k.Why
	default:
		tool.KeyField, tool.KeyWhy = k.Field(KindMCP), "idemproof scan: "+k.Why
	}
	tool.KeyUUID = op.Key != nil && op.Key.UUID
	if l := op.Ledger; l != nil {
		tool.Ledger = &profileinit.ToolLedger{Tool: l.Tool, Arguments: l.Arguments, Count: l.Count}
	}
	for _, o := range t.Operations {
		if o.ReadOnly {
			tool.ReadOnlyTools = append(tool.ReadOnlyTools, o.Name)
		}
	}
	if r.InFlight != nil {
		tool.InFlightCode = r.InFlight.Code
	}
	if r.Mismatch != nil {
		tool.MismatchCode = r.Mismatch.Code
	}
	return profileinit.FromMCPTool(tool)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// fileName is an operation's name as a file name: "POST /v1/notes" → "POST-v1-notes".
func fileName(name string) string {
	s := strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-.")
	if s == "" {
		return "operation"
	}
	return s
}

// declaredStart is the start timeout a written profile declares: none for the default.
func declaredStart(d time.Duration) time.Duration {
	if d == mcpstdio.DefaultStartTimeout {
		return 0
	}
	return d
}
