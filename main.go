// Command hostcore executes a coding agent's tools under control: it speaks
// line-delimited JSON-RPC 2.0 on stdin/stdout (see README.md and
// PROTOCOL.md). main holds flags, wiring, signals and exit codes only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"hostcore/handlers"
	"hostcore/handlers/frontend"
	"hostcore/handlers/tools"
	"hostcore/rpc"
	"hostcore/rpc/mcp"
	"hostcore/sandbox/harden"
	"hostcore/sandbox/process"
	"hostcore/store"
)

// closeStore closes the database and says why if that fails (a database
// deleted under hostcore is noticed here, its rows kept in the journal).
func closeStore(st *store.Store, log *slog.Logger) {
	if err := st.Close(); err != nil {
		log.Error("closing the database", "err", err)
	}
}

// sweepDelay is how long the sweep waits after start-up: a client's
// first requests (initialize, session.create) come within it, and on a
// busy machine a walk of the data dir beside them would take a share of
// the CPU their answers need.
const sweepDelay = time.Second

// sweepInBackground starts the sweep of what a crash or an older hostcore
// left in the data dir: it walks the data dir, so it runs beside serving,
// sweepDelay after start-up, rather than on the path to the first
// answer. The function it returns cancels the sweep and waits for it, so
// that the store is not closed under it.
func sweepInBackground(ctx context.Context, h *handlers.Server, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(sweepDelay):
		case <-ctx.Done():
			return
		}
		if err := h.SweepOrphans(ctx); err != nil && ctx.Err() == nil {
			log.Warn("background sweep", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// openStore opens the store under dir. HOSTCORE_SNAPSHOT_RETENTION=COUNT,BYTES
// sets the retention rule's per-session bounds (the data dir's are four
// times those), for tests and tuning; unset, the defaults hold, and a
// malformed value stops the start rather than be read as a rule.
func openStore(dir string) (*store.Store, error) {
	var cfg store.Config
	if v := os.Getenv("HOSTCORE_SNAPSHOT_RETENTION"); v != "" {
		count, size, _ := strings.Cut(v, ",")
		n, err1 := strconv.Atoi(count)
		b, err2 := strconv.ParseInt(size, 10, 64)
		if err1 != nil || err2 != nil || n < 1 || b < 1 {
			return nil, fmt.Errorf("HOSTCORE_SNAPSHOT_RETENTION=%q: want COUNT,BYTES, both positive", v)
		}
		cfg.Retention = store.Retention{SessionCount: n, SessionBytes: b, DataDirCount: 4 * n, DataDirBytes: 4 * b}
	}
	return store.OpenWith(dir, cfg)
}

// logFlushWait bounds how long the last log lines wait for stderr at exit
// (a client that never reads it must not hold up the exit PROTOCOL
// section 1 bounds at 3 s).
const logFlushWait = 250 * time.Millisecond

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// Nothing hostcore runs may reach into it (its stdin, its stdout, its
	// memory): first of all, in every mode and in the reapers, which are
	// hostcore re-executed (execve makes a process dumpable again).
	if err := harden.Self(); err != nil {
		fmt.Fprintf(os.Stderr, "hostcore: %v\n", err)
		os.Exit(1)
	}
	// A per-command reaper is hostcore re-executed; it must run before
	// anything else touches signals or stdio.
	process.MaybeRunReaper()
	// Descriptors inherited above stderr reach no command (a sidecar's
	// private channels); hostcore itself never uses them.
	if err := process.KeepInheritedFromCommands(); err != nil {
		fmt.Fprintf(os.Stderr, "hostcore: cannot mark inherited descriptors close-on-exec: %v\n", err)
		os.Exit(1)
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "mcp" {
		return runMCP(args[1:])
	}
	fs := flag.NewFlagSet("hostcore", flag.ContinueOnError)
	env := newEnvDefaults()
	dataDir := fs.String("data-dir", envOr("HOSTCORE_DATA_DIR", defaultDataDir()), "directory for the database, scratch and snapshots")
	timeoutStr := fs.String("permission-timeout", envOr("HOSTCORE_PERMISSION_TIMEOUT", "120s"), "how long a permission card waits before it is denied")
	slots := fs.Int("mutation-slots", env.getInt("HOSTCORE_MUTATION_SLOTS", "mutation-slots", 4), "Write/Edit bodies that may run at once across sessions")
	logLevel := fs.String("log-level", envOr("HOSTCORE_LOG_LEVEL", "info"), "debug, info, warn or error (logs go to stderr)")
	warm := fs.Bool("warm-reaper", env.getBool("HOSTCORE_WARM_REAPER", "warm-reaper", true), "keep a Bash reaper started ahead of the next command (one idle child process; --warm-reaper=false starts one per command)")
	batch := fs.Bool("batch-commands", env.getBool("HOSTCORE_BATCH_COMMANDS", "batch-commands", false), "run Bash commands as batch tasks (Linux SCHED_BATCH: no wakeup preemption; the user's interactive programs keep the CPU, pipelines switch less)")
	spinStr := fs.String("input-spin", envOr("HOSTCORE_INPUT_SPIN", rpc.InputSpin.String()), "how long a read of stdin polls before it sleeps while requests come back to back, 0 to 1ms (0: never)")
	if code, ok := parseFlags(fs, args, "hostcore [flags]  (or: hostcore mcp --workspace DIR [flags])"); !ok {
		return code
	}
	spin, err := time.ParseDuration(*spinStr)
	if err != nil || spin < 0 || spin > time.Millisecond {
		fmt.Fprintf(os.Stderr, "hostcore: %s%q: want a duration from 0 to 1ms, such as 100us; 0 never spins (input-spin)\n", givenValue(fs, "input-spin", "HOSTCORE_INPUT_SPIN"), *spinStr)
		return 2
	}
	if strings.TrimSpace(*dataDir) == "" {
		fmt.Fprintf(os.Stderr, "hostcore: %s must not be empty\n", givenAs(fs, "data-dir", "HOSTCORE_DATA_DIR"))
		return 2
	}
	if *slots < 1 {
		fmt.Fprintln(os.Stderr, "hostcore: --mutation-slots must be at least 1")
		return 2
	}
	timeout, log, logw, ok := commonFlags("hostcore", fs, env, *timeoutStr, *logLevel)
	if !ok {
		return 2
	}
	defer logw.Close(logFlushWait)
	// HOSTCORE_CPUPROFILE=FILE writes a CPU profile of the whole run (for
	// `go tool pprof`), to profile the real binary as a client drives it.
	if p := os.Getenv("HOSTCORE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}

	dir, err := canonicalDataDir(*dataDir)
	if err != nil {
		log.Error("data dir", "err", err)
		return 1
	}
	// The two slow start-up steps run side by side: opening (and
	// migrating) the database, and compiling the tool schemas.
	schemas := make(chan error, 1)
	go func() { schemas <- tools.Prepare() }()
	st, err := openStore(dir)
	if err != nil {
		log.Error("opening store", "err", err)
		return 1
	}
	defer closeStore(st, log)
	if err := <-schemas; err != nil {
		log.Error("compiling tool schemas", "err", err)
		return 1
	}
	// Benchmark-only switch: measures what the audit costs. Never set it in
	// production; every call would go unaudited.
	if os.Getenv("HOSTCORE_BENCH_NO_AUDIT") == "1" {
		st.NoAudit = true
		log.Warn("audit disabled by HOSTCORE_BENCH_NO_AUDIT (benchmarks only)")
	}

	// Writes to a closed stdout must come back as EPIPE, not kill us with
	// SIGPIPE: that is how a vanished client is noticed. Notify (not
	// Ignore) so that commands we spawn keep the default disposition.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	// Stopping cancels every call at once, on this goroutine's call (the
	// shutdown method runs inline, before the next line is read), with a
	// cause that resolves an open card as a deny (rpc.Stopping).
	ctx, cancelCause := context.WithCancelCause(context.Background())
	defer cancelCause(nil)
	stopping := func() { cancelCause(rpc.Stopping("hostcore is shutting down")) }
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	go func() {
		select {
		case sig := <-sigs:
			stopping()
			log.Info("signal: shutting down", "signal", sig.String())
		case <-ctx.Done():
		}
	}()

	// A larger stdout pipe lets a flood of tool.output reach the client
	// in fewer, larger pieces (see process.GrowPipe).
	process.GrowPipe(os.Stdout)
	// Orphans of a reaper killed by its own command become hostcore's
	// children, not init's, so that they can be killed (see
	// process.SweepAdopted).
	if err := process.BecomeHostSubreaper(); err != nil {
		log.Warn("cannot become a child subreaper; orphans of a killed reaper go to init", "err", err)
	}
	out, restore := rpc.PollableOutput(os.Stdout)
	defer restore()
	srv := rpc.NewServer(rpc.Input(os.Stdin, spin), out, log)
	h, err := handlers.New(handlers.Config{
		DataDir: dir, PermissionTimeout: timeout, Version: version, Shutdown: stopping, MutationSlots: *slots,
		WarmReaper: *warm, BatchCommands: *batch,
	}, st, srv, log)
	if err != nil {
		log.Error("start-up", "err", err)
		return 1
	}
	defer h.Close()
	context.AfterFunc(ctx, h.StopBackground) // a stop kills the background commands at once
	defer sweepInBackground(ctx, h, log)()
	log.Info("hostcore ready", "version", version, "dataDir", dir, "permissionTimeout", timeout.String())
	if err := srv.Run(ctx, h.Methods()); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("hostcore exiting")
	return 0
}

// parseFlags parses a command's flags: --help prints the usage and exits
// 0; a bad flag or an argument that is not a flag exits 2 (an MCP client
// configured with "hostcore --data-dir D mcp" got the native protocol:
// "mcp" must come first).
func parseFlags(fs *flag.FlagSet, args []string, usage string) (code int, ok bool) {
	fs.Usage = func() {
		// The flags of this command that a HOSTCORE_<NAME> variable sets.
		var named []string
		for _, n := range []string{"data-dir", "permission-timeout", "log-level", "mutation-slots", "warm-reaper", "batch-commands", "input-spin"} {
			if fs.Lookup(n) != nil {
				named = append(named, n)
			}
		}
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags (%s are also read from HOSTCORE_<NAME>, dashes as underscores; a flag wins over its variable):\n", usage, strings.Join(named, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q: only flags are taken (the MCP server is \"hostcore mcp\", mcp first)\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// maxPermissionTimeout bounds --permission-timeout: a card must fail
// closed within a day at the latest.
const maxPermissionTimeout = 24 * time.Hour

// givenValue prefixes a bad value as it was given: "--flag " or "VAR=".
func givenValue(fs *flag.FlagSet, flagName, env string) string {
	if n := givenAs(fs, flagName, env); n != env {
		return n + " "
	}
	return env + "="
}

// givenAs names a setting as the user gave it: the flag, if given, else
// its variable.
func givenAs(fs *flag.FlagSet, flagName, env string) string {
	name := env
	fs.Visit(func(f *flag.Flag) {
		if f.Name == flagName {
			name = "--" + flagName
		}
	})
	return name
}

// commonFlags checks the flags both commands take and builds the logger
// (JSON lines on stderr; stdout is the protocol's).
func commonFlags(cmd string, fs *flag.FlagSet, env *envDefaults, timeoutStr, logLevel string) (time.Duration, *slog.Logger, *rpc.LogWriter, bool) {
	if !env.check(cmd, fs) {
		return 0, nil, nil, false
	}
	timeout, err := time.ParseDuration(timeoutStr)
	if err != nil || timeout < time.Millisecond || timeout > maxPermissionTimeout {
		// Cards carry the timeout in whole milliseconds (timeoutMs); one
		// that never ends in practice (1000000h) is no fail-closed timer.
		fmt.Fprintf(os.Stderr, "%s: %s%q: want a duration from 1ms to 24h, such as 120s (permission-timeout)\n", cmd, givenValue(fs, "permission-timeout", "HOSTCORE_PERMISSION_TIMEOUT"), timeoutStr)
		return 0, nil, nil, false
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s%q: want debug, info, warn or error (log-level)\n", cmd, givenValue(fs, "log-level", "HOSTCORE_LOG_LEVEL"), logLevel)
		return 0, nil, nil, false
	}
	// Logs never wait for the reader of stderr (rpc.LogWriter).
	logw := rpc.NewLogWriter(os.Stderr)
	return timeout, slog.New(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: level})), logw, true
}

// envDefaults reads the HOSTCORE_<NAME> variables that give flags their
// defaults. It keeps, by flag name, the variables set to values hostcore
// cannot read: they stop it as a bad flag would (exit 2), not silently
// fall back, unless the flag itself was given (a flag wins over its
// variable).
type envDefaults struct{ errs map[string]string }

func newEnvDefaults() *envDefaults { return &envDefaults{errs: map[string]string{}} }

func (e *envDefaults) getInt(key, flagName string, def int) int {
	raw := os.Getenv(key)
	if raw == "" {
		return def
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < 1 {
		e.errs[flagName] = fmt.Sprintf("%s=%q: want a whole number of at least 1", key, raw)
		return def
	}
	return v
}

// getBool reads a switch: "1" or "true" (any case) turn it on, "0" or
// "false" off; unset, it is def.
func (e *envDefaults) getBool(key, flagName string, def bool) bool {
	raw := os.Getenv(key)
	if raw == "" {
		return def
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		e.errs[flagName] = fmt.Sprintf("%s=%q: want 1, true, 0 or false", key, raw)
	}
	return v
}

// check reports the unreadable variables whose flags were not given;
// false: exit 2.
func (e *envDefaults) check(cmd string, fs *flag.FlagSet) bool {
	fs.Visit(func(f *flag.Flag) { delete(e.errs, f.Name) })
	for _, msg := range e.errs {
		fmt.Fprintf(os.Stderr, "%s: %s\n", cmd, msg)
	}
	return len(e.errs) == 0
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func defaultDataDir() string {
	// A relative XDG_DATA_HOME is invalid and ignored (XDG Base
	// Directory specification), not taken from the working directory.
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "hostcore")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "hostcore")
	}
	return filepath.Join(os.TempDir(), "hostcore")
}

// canonicalDataDir creates the data dir and resolves it, so the scratch
// root built from it is canonical (containment compares canonical paths).
func canonicalDataDir(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", fmt.Errorf("empty data dir")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// mcpDataDir is the default data dir of "hostcore mcp" for a workspace:
// base/mcp/<the hash its session id carries>.
func mcpDataDir(base, workspace string) string {
	root, err := filepath.Abs(workspace)
	if err == nil {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
	}
	return filepath.Join(base, "mcp", strings.TrimPrefix(frontend.SessionID("mcp", root), "mcp-"))
}

// runMCP is "hostcore mcp": one session served over MCP's stdio transport
// (rpc/mcp). stdout carries MCP only; logs go to stderr.
func runMCP(args []string) int {
	fs := flag.NewFlagSet("hostcore mcp", flag.ContinueOnError)
	env := newEnvDefaults()
	workspace := fs.String("workspace", "", "the workspace directory the session is bound to (default: the MCP client's first root)")
	permMode := fs.String("permission-mode", "ask", "ask, accept-edits or auto")
	dataDir := fs.String("data-dir", envOr("HOSTCORE_DATA_DIR", defaultDataDir()), "directory for the database, scratch and snapshots")
	timeoutStr := fs.String("permission-timeout", envOr("HOSTCORE_PERMISSION_TIMEOUT", "120s"), "how long a permission prompt waits before it is denied")
	logLevel := fs.String("log-level", envOr("HOSTCORE_LOG_LEVEL", "info"), "debug, info, warn or error (logs go to stderr)")
	warm := fs.Bool("warm-reaper", env.getBool("HOSTCORE_WARM_REAPER", "warm-reaper", true), "keep a Bash reaper started ahead of the next command (one idle child process; --warm-reaper=false starts one per command)")
	batch := fs.Bool("batch-commands", env.getBool("HOSTCORE_BATCH_COMMANDS", "batch-commands", false), "run Bash commands as batch tasks (Linux SCHED_BATCH: no wakeup preemption; the user's interactive programs keep the CPU, pipelines switch less)")
	if code, ok := parseFlags(fs, args, "hostcore mcp [--workspace DIR] [flags]"); !ok {
		return code
	}
	if strings.TrimSpace(*dataDir) == "" {
		fmt.Fprintf(os.Stderr, "hostcore mcp: %s must not be empty\n", givenAs(fs, "data-dir", "HOSTCORE_DATA_DIR"))
		return 2
	}
	switch *permMode {
	case "ask", "accept-edits", "auto":
	default:
		fmt.Fprintf(os.Stderr, "hostcore mcp: --permission-mode %q: want ask, accept-edits or auto\n", *permMode)
		return 2
	}
	timeout, log, logw, ok := commonFlags("hostcore mcp", fs, env, *timeoutStr, *logLevel)
	if !ok {
		return 2
	}
	defer logw.Close(logFlushWait)
	explicit := os.Getenv("HOSTCORE_DATA_DIR") != ""
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "data-dir" })
	if !explicit {
		// One database per workspace: an MCP client starts a server per
		// project, often several at once, and a database has one hostcore.
		// Without --workspace the directory the client started hostcore in
		// (a client starts a server per project there) keys it.
		key := *workspace
		if key == "" {
			key, _ = os.Getwd()
		}
		*dataDir = mcpDataDir(*dataDir, key)
	}
	dir, err := canonicalDataDir(*dataDir)
	if err != nil {
		log.Error("data dir", "err", err)
		return 1
	}
	st, err := openStore(dir)
	if err != nil {
		log.Error("opening store", "err", err)
		return 1
	}
	defer closeStore(st, log)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigCtx, stopSignalling := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stopSignalling()
	// The client vanishing and the shutdown method cancel ctx, never the
	// signal context: stopping that one hands the signals back to their
	// default, and a SIGHUP or SIGTERM during the wind-down (a tree being
	// killed, audit rows being written) killed hostcore on the spot.
	ctx, stop := context.WithCancel(sigCtx)
	defer stop()
	// As in the native mode: orphans of a reaper its command killed come
	// to hostcore to be killed, and a client that closed its end of stdout
	// is noticed while nothing is written.
	if err := process.BecomeHostSubreaper(); err != nil {
		log.Warn("cannot become a child subreaper; orphans of a killed reaper go to init", "err", err)
	}
	stopWatch := rpc.WatchOutput(os.Stdout, func() {
		log.Warn("client vanished: stdout reader closed; cancelling all calls")
		stop()
	})
	defer stopWatch()

	front := mcp.New(log)
	h, err := handlers.New(handlers.Config{DataDir: dir, PermissionTimeout: timeout, Version: version, Shutdown: stop, WarmReaper: *warm, BatchCommands: *batch}, st, front, log)
	if err != nil {
		log.Error("start-up", "err", err)
		return 1
	}
	defer h.Close()
	context.AfterFunc(ctx, h.StopBackground) // a stop kills the background commands at once
	defer sweepInBackground(ctx, h, log)()
	opts := mcp.Options{Workspace: *workspace, PermissionMode: *permMode, Version: version, ToolsWorkspace: filepath.Join(dir, "mcp-tools")}
	if *workspace == "" {
		if err := os.MkdirAll(opts.ToolsWorkspace, 0o700); err != nil {
			log.Error("start-up", "err", err)
			return 1
		}
	}
	// No spin here: the SDK hands each request to a goroutine of its own,
	// so the read goroutine is never the one to answer.
	in, out := rpc.MessageLines(rpc.Input(os.Stdin, 0), os.Stdout, log, front.Hooks())
	if err := front.Serve(ctx, mcpBackend{h}, opts, &sdkmcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1}); err != nil {
		log.Error("mcp", "err", err)
		return 1
	}
	log.Info("hostcore mcp exiting")
	return 0
}

// stopSignals are the signals that stop hostcore in order (every call
// cancelled and answered, the database closed, exit 0): SIGTERM, SIGINT,
// and SIGHUP (a closed terminal, a parent hanging up). SIGINT and SIGHUP
// stay ignored when hostcore was started with them ignored, as a shell
// starts a background job (`hostcore &` in a script: the terminal's
// Ctrl-C is not for it) and nohup starts its command; registering them
// would undo that.
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// mcpBackend is handlers' frontend door as rpc/mcp's Backend and Arriver:
// rpc/mcp declares what it needs, handlers knows nothing of MCP.
type mcpBackend struct{ *handlers.Server }

func (b mcpBackend) FrontendTools(ctx context.Context, sessionID string) ([]mcp.Tool, error) {
	tools, err := b.Server.FrontendTools(ctx, sessionID)
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		// Reads and a Write of the same content have no further effect when
		// repeated (but BashOutput: a read returns what is new since the
		// last); a command may reach the network.
		out = append(out, mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, ReadOnly: t.ReadOnly, Destructive: t.Destructive,
			Idempotent: (t.ReadOnly && t.Name != "BashOutput") || t.Name == "Write", OpenWorld: t.Name == "Bash"})
	}
	return out, err
}

func (b mcpBackend) Execute(ctx context.Context, c mcp.Call) (any, error) {
	return b.Server.Execute(ctx, executeParams(c))
}

func (b mcpBackend) Arrive(c mcp.Call) mcp.Arrival { return b.Server.Arrive(executeParams(c)) }

func (b mcpBackend) ExecuteArrival(ctx context.Context, a mcp.Arrival, args json.RawMessage) (any, error) {
	return b.Server.ExecuteArrival(ctx, a.(*handlers.Arrival), args)
}

func (b mcpBackend) AbortArrival(a mcp.Arrival) { b.Server.AbortArrival(a.(*handlers.Arrival)) }

func executeParams(c mcp.Call) handlers.ExecuteParams {
	return handlers.ExecuteParams{SessionID: c.SessionID, TurnID: c.TurnID, ToolCallID: c.ToolCallID, ToolName: c.ToolName, PromptID: c.PromptID, Args: c.Args}
}
