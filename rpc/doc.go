// Package rpc is hostcore's JSON-RPC 2.0 transport: line framing, one
// method table read by one dispatcher, the wire form of errors, and
// host→client calls whose waits end when the client can no longer
// answer. It knows nothing of tools; handlers declares the table.
//
// # One stack, split as jsonrpc2_v2 splits it
//
// Inbound requests, their answers, host→client requests and the replies
// to them all go through this package's own connection. Its shape follows
// golang.org/x/tools/internal/jsonrpc2_v2 on purpose: a preempter stage
// on the read goroutine that sees every request in arrival order, then a
// handler stage that runs in order (the sequencer) or concurrently (the
// workers), and outgoing calls matched to their replies by id. Here the
// first stage frames the line, looks the method up (Methods), weighs it
// against the in-flight budget and runs its Prepare hook; a configuring
// method, and every request read while one runs, goes to the sequencer;
// anything else is answered at once (Prepare's quick) or runs on a
// worker. That worker is the goroutine that read the request: it hands
// the reading to an idle worker and runs the call on its own thread,
// which is awake, so no thread's wake-up lies on a call's path, and the
// next line is read while the call runs.
//
// sourcegraph/jsonrpc2's Conn is not used: it closes the connection on
// the first line it cannot read (hostcore answers -32700 and reads on),
// decodes params into interface{} values and encodes them again on the
// read goroutine (seconds for a line of megabytes, while permission
// replies wait unread), carries only non-negative integer or string ids
// (JSON-RPC allows any number: hostcore echoes it as sent), and calls its
// handler on its read goroutine, one request at a time. jsonrpc2_v2
// itself is internal to x/tools.
//
// # Framing
//
// One message per line; '\r' before '\n' is dropped and a blank line is
// skipped without an answer. A line over MaxLine (16 MiB) is answered
// -32600 and skipped without being held whole. A line that is not UTF-8
// JSON (encoding/json's nesting limit included) is answered -32700; a
// batch, a value that is no object, a bad "jsonrpc", id or method,
// -32600. Member names are matched exactly (JSON-RPC's are
// case-sensitive). A reply to a host→client request is never answered:
// a malformed one whose id is owed ends that request's wait as an error
// reply at once. Answers to requests echo a number id exactly as sent.
//
// # Ordering
//
// Requests run concurrently, so answers may come out of order, with two
// guarantees: a Configuring method finishes before any request read
// after it starts, and Prepare runs in arrival order, so a method can
// take its place in an order of its own there (one session's Write and
// Edit calls apply in the order their lines arrived). A configuring
// method does not stop the reading of input: requests read while it
// runs queue behind it on the sequencer (at most 4,096 requests or
// 64 MiB of params; past that an Ordinary one is refused BUSY and a
// Configuring one waits for room), and a reply to a card is read at once
// but acted on only once the configuring methods read before it have
// finished, as if read then.
//
// # Budgets
//
// Every running request weighs 64 KiB plus the size of its params against
// the in-flight budget (64 MiB: about a thousand small requests, or three
// of the largest lines); one that does not fit is answered -32000 BUSY at
// once, on the read goroutine, which never waits for a running call (the
// replies to cards come in on it). Configuring methods are not weighed,
// so shutdown is never refused. Cancel methods run under a budget of
// their own (256 at once), so that a budget full of calls waiting on
// cards can still be cancelled. While the client leaves more than 1 MiB
// of answers unread, at most eight more calls start, so that finished
// answers do not pile up in memory (waitForRoom).
//
// # Writing
//
// Every line is written whole by one Write, in the order its request's
// answer was ready. The read goroutine never blocks on a client that
// does not read: where stdout is a non-blocking pipe or socket
// (PollableOutput, Unix), what does not fit now is left to a goroutine
// that writes it in order; elsewhere its writes block as any other.
//
// # Host→client calls
//
// Call and CallWithin send a request with an id hostcore picks, a string
// of 128 random bits that only the client, which reads the request, can
// answer, and wait for its reply, for ctx, for the deadline, for the end of input (nobody
// is left to answer: ErrNoClient) or for Run to return. The read
// goroutine hands a reply to its waiting call before it reads the next
// line, so a reply read right before the end of input (one write, then
// close) is the call's answer, never ErrNoClient: a wait that sees the
// input's end looks for a reply already handed over first. A reply whose
// id no call waits for is dropped and logged at WARN.
//
// # Ending
//
// At the end of input, card and question waits end at once, running calls
// finish within their own timeouts, and Run returns once every answer is
// written whole. When ctx ends (shutdown, a signal; cause Stopping) or
// the client stops reading stdout, running calls are cancelled and get
// DrainTimeout to answer; a request read meanwhile runs only if its
// method runs WhileStopping, and one read after the drain is refused
// SHUTTING_DOWN.
//
// # Platforms
//
// The watch of stdout polls without waiting, every 200 ms: a goroutine
// blocked in poll(2) holds one of Go's Ps until the runtime takes it
// back (up to 10 ms), and with two CPUs the reader holds the other.
//
// Non-blocking stdout, watching stdout for a vanished reader and the
// spinning read of stdin are Unix only (build-tagged files); elsewhere
// stdout and stdin are plain blocking files and a vanished client is
// noticed at the next write. What room a pipe or socket has left is read
// on Linux only.
package rpc
