// Package stdio is the fault layer on the pipes of an MCP server spoken to over stdio:
// the server is a process the layer starts, each of its clients speaks newline-delimited
// JSON-RPC to it through the layer, and the layer loses, delays, cuts, doubles or kills
// what its rules say, after the server has committed or before it ever read the request.
//
//	client ──lines──> Layer ──stdin──> server process (a process group of its own)
//	       <──lines──  │    <──stdout──
//	                   │         stderr ──> kept (its tail explains a server that stopped)
//	              faultproxy.Engine: rules, attempt numbering, journal, admin API
//
// The rules, their matching, the seeded probabilities, the attempt ordinals per key, the
// journal and the admin API are the HTTP proxy's own (faultproxy.Engine); only the
// faults are this package's, one small type per file, because what can go wrong on a
// pipe is not what goes wrong on a TCP connection. How a rule's fault acts on a pipe:
//
//	fault            phase   on the pipe
//	before-drop      before  the request line never reaches the server (so does before-reset)
//	before-delay     before  the request line reaches the server late
//	before-status    before  the layer answers with the fault's body, a JSON-RPC response
//	                         (its id set to the request's); needs that body: a line has no status
//	after-drop       after   the server answered; its answer line never reaches the client
//	                         (so do after-reset and after-close: nothing to reset on a pipe)
//	after-truncate   after   the first `bytes` of the answer line, then its newline
//	after-hold       after   the answer held duration_ms, then delivered or dropped (then)
//	after-delay      after   the answer delivered late
//	after-status     after   the answer replaced by the fault's body (a JSON-RPC response)
//	after-kill       after   the server process (its whole group) killed right after it
//	                         answered: the answer is lost and the client sees its server exit
//	duplicate        both    the request line written twice (the copy under an id of the
//	                         layer's own, so the server sees two requests); the client gets
//	                         the first copy's answer
//
// A rule matches as the proxy's do, with what a line has: the JSON-RPC method is the path
// (`path: tools/call`), no method, the key at Config.KeyField, and as headers the
// attributes a caller gives a message (Conn.Send, Config.Annotate).
//
// Connections. Every client connection gets a server process of its own, as a desktop
// agent host starts one per configured server: Connect (in-process) or Serve (a listener,
// for a relay that an agent host starts as its server command). When the server exits —
// by itself, or killed by after-kill — the connection ends: the client reads the end of
// its server's output, and must connect (start it) again. When the client ends the
// connection, the server is stopped as MCP's stdio transport asks (stdin closed, then
// SIGTERM, then SIGKILL, each after Config.StopGrace) and reaped, with everything in its
// process group.
//
// The journal: one faultproxy.Record per message a client sent (requests with their
// answers, notifications, answers to the server's own requests) and per message the
// server sent on its own (notifications, requests: their Note says so), with the JSON-RPC
// id and method, the key, the rule and fault, and the outcome class of what the client
// got (Config.Classify). A record's Method is "stdio"; UpstreamStatus and ClientStatus
// are 200 for an answer line written whole (a line has no status; 200 keeps the journal's
// meaning, as MCP over HTTP answers 200 whatever happened), 0 for none.
//
// What is guaranteed: memory is bounded (lines by Config.MaxLine, the journal by its
// byte budget, the server's stderr by StderrTailBytes); no server process outlives the
// layer's Close; a fault acts on one request alone, and other requests on the same
// connection go on (but after-kill, which ends the connection).
//
// What is not: the layer does not restart a killed server by itself (the next Connect
// does), nor replay the initialize handshake to it: a stdio server's session is its
// process, and a client whose server died must initialize again, as it would.
package stdio
