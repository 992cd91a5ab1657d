// Package scan answers, for a whole API at once, which of its operations an agent or a
// client may retry after a lost answer, and whether the operations' own declarations
// (MCP's idempotentHint and readOnlyHint, HTTP's idempotent PUT and DELETE) tell the
// truth. It is idemproof scan's room: the catalogue (package scenarios) proves one
// operation deeply from a hand-written profile; a scan probes every operation briefly
// from what the server or document says of itself.
//
//	Enumerate ──initialize, tools/list──> MCP server        (no tool is called; Streamable
//	                                                          HTTP, or a stdio server it starts)
//	          ──read──> OpenAPI document                    (every POST, PUT, PATCH, DELETE)
//	          plan: arguments (schema, --args), safety rules, what will be called
//	Run       ──calls──> fault proxy (in process; on a stdio server's pipes, the fault
//	                     layer of faultproxy/stdio) ──> server, per operation:
//	             two calls, two fresh keys      → the per-execution value, if any
//	             a call whose answer is lost    → its repeat: one execution?
//	             the key with one argument changed → refused?
//	             two copies at once             → one execution?
//	          ──> Report: operation × {takes a key, replays after a lost answer, refuses
//	              a changed request, one of two concurrent copies, annotation honest}
//
// What a verdict means. PASS needs proof: a per-execution value (a refund's id) that the
// repeat carried again, or a declared ledger that counted one execution. FAIL is a
// definite violation seen: a second execution (another per-execution value, or the
// ledger counting two), a changed request answered with a success, an identical keyed
// repeat refused after its original committed. UNKNOWN says why the answers could not
// tell — most often "no per-execution value to tell a replay from a second execution":
// two answers alike may be a replay or a deterministic second execution, and a scan never
// guesses which. N/A is a check that does not apply (an operation that takes no key has
// no changed request to refuse) or an operation skipped on purpose.
//
// The per-execution value is detected, never assumed (values.go): a member of the answer
// with an id-like name whose values differ between two executions with fresh keys, and
// that echoes nothing the call sent. An --args ledger, where declared, counts executions
// instead (the catalogue's side_effects).
//
// Where an operation takes its key is read from what it declares (keyplace.go): an
// argument or a header parameter named or described for idempotency, a _meta member the
// tool names, SEP-3182's params.idempotencyKey when the server advertises
// tools.idempotency. Arguments come from the schema's examples, defaults, consts and
// enums, and simple values for required properties — never an invented id of something
// that must exist: such an operation is "not probed: needs arguments for …" until --args
// gives them (arguments.go, argsfile.go). The builder is hand-written on kin-openapi's
// schema model (an MCP tool's JSON Schema is read into it too): sample-data generators
// fill every field with something, where the scan must refuse to invent what would only
// be refused, or act on something real.
//
// Safety. Enumerate calls nothing. Operations annotated destructiveHint: true, DELETE
// operations and those matching Config.Exclude are not probed unless
// Config.AllowDestructive or Config.Include names them; readOnlyHint tools are listed
// and probed only with Config.IncludeReadOnly. The command prints what it will call and
// asks before Run calls it. Every probe uses fresh keys and entities; a probe's calls are
// bounded in number (at most ten per operation, besides at most five retries of each
// in-flight answer) and time (Config.CallTimeout per call, Config.OperationTimeout per
// operation), and Config.Parallel operations run at once. The scan never relies on the specification's defaults for hints a tool leaves
// out (destructiveHint defaults to true there): only what a tool declares counts.
//
// The lost answer is the fault proxy's after-reset: the server's whole answer is read,
// then the client's connection is reset; the proxy's journal keeps the answer the client
// never saw, which the repeat's is compared with. Every call carries ProbeHeader, which
// the proxy's rules match, whatever the key's placement. On a stdio server's pipes the
// reset is a lost line (the layer's after-reset drops the answer), the header an
// attribute of the call's line, and the lost call is given up once the layer journaled
// its answer: silence on a pipe would otherwise last the whole call timeout.
package scan
