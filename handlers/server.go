package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"hostcore/handlers/order"
	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/rpc"
	"hostcore/sandbox"
	"hostcore/sandbox/background"
	"hostcore/sandbox/process"
	"hostcore/sandbox/shellenv"
	"hostcore/store"
)

// Client is the way back to the client: host→client requests with a reply
// and notifications. Implemented by rpc.Server (and mcp.Frontend).
type Client interface {
	Call(ctx context.Context, method string, params, result any) error
	// CallWithin is Call with the reply due within d; past it, an error
	// wrapping context.DeadlineExceeded. A reply that came in time
	// counts even if it is acted on later (rpc.Server.Call).
	CallWithin(ctx context.Context, d time.Duration, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// Config is what main passes in.
type Config struct {
	DataDir           string
	PermissionTimeout time.Duration
	Version           string
	// MutationSlots is the number of Write/Edit bodies that may run at once
	// across all sessions (design section 4d). Default 4.
	MutationSlots int
	// Shutdown is called by the shutdown method; main cancels everything.
	Shutdown func()
	// WarmReaper keeps one Bash reaper started ahead of the next command
	// (process.Warm): the start of hostcore's binary, tens of ms, off
	// each command, at the price of an idle child process between
	// commands (main turns it on unless --warm-reaper=false).
	WarmReaper bool
	// BatchCommands runs Bash commands as batch tasks (process.Spec.Batch):
	// off by default, so that a command runs as it would in the user's
	// terminal.
	BatchCommands bool
}

// Server holds hostcore's state for one connection.
type Server struct {
	cfg Config

	store  *store.Store
	client Client
	log    *slog.Logger
	grants perms.Grants
	tools  *tools.Registry
	slots  chan struct{}   // global mutation slots
	warm   *process.Warm   // a reaper started ahead for the next Bash command; nil unless Config.WarmReaper
	snap   *shellenv.Cache // the login profile's snapshot for Bash commands (bash_snapshot.go)
	// bg holds the commands Bash runs in the background.
	bg *background.Registry
	// pluginTimeout bounds every plugin call (pluginTimeout; tests shorten it).
	pluginTimeout time.Duration

	mu        sync.Mutex
	sessions  map[string]*runtime // in-memory state per session id
	pathLocks order.PathLocks
	lookups   lookups // the session lookups of calls already read (ticket.go)
}

// New builds a Server. It fails if a tool schema does not compile.
func New(cfg Config, st *store.Store, client Client, log *slog.Logger) (*Server, error) {
	if cfg.PermissionTimeout <= 0 {
		cfg.PermissionTimeout = 120 * time.Second
	}
	if cfg.MutationSlots <= 0 {
		cfg.MutationSlots = 4
	}
	s := &Server{
		cfg: cfg, store: st, client: client, log: log,
		slots:         make(chan struct{}, cfg.MutationSlots),
		sessions:      map[string]*runtime{},
		pluginTimeout: pluginTimeout,
	}
	var err error
	if s.tools, err = s.builtinTools(); err != nil {
		return nil, err
	}
	if cfg.WarmReaper {
		s.warm = process.NewWarm(tools.BashWarmIdle)
	}
	s.snap = newShellCache(cfg, log)
	s.bg = background.New(tools.ShellExitedNotice(func(method string, params any) { client.Notify(context.Background(), method, params) }))
	return s, nil
}

// Close lets go of what the Server keeps ready between calls (the warm
// reaper, the shell snapshot and a take of it that runs), kills the
// background commands, and waits until it has. Call it once the
// connection is done.
func (s *Server) Close() {
	s.bg.Close()
	if s.warm != nil {
		s.warm.Close()
	}
	s.snap.Close()
	sandbox.ReleaseBases()
}

// StopBackground kills every background command and waits until their
// trees are gone: main calls it as hostcore begins to stop, so that they
// go within the stop's bound, beside the calls being cancelled.
func (s *Server) StopBackground() { s.bg.Close() }

// Methods is the method table: each method's kind and body, read by
// rpc's dispatcher. Configuring methods finish before any later line is
// handled; cancels run under a budget of their own, so that a budget full
// of calls waiting on cards can still be cancelled. Once hostcore is
// stopping only a tool call (it answers as aborted and is audited) and
// shutdown (answered {}) still run: a setting or session changed after
// shutdown would be lost or half made.
func (s *Server) Methods() rpc.Methods {
	t := rpc.Methods{
		"initialize":        {Kind: rpc.Configuring, Run: s.initialize},
		"settings.get":      {Kind: rpc.Configuring, Run: s.settingsGet},
		"settings.update":   {Kind: rpc.Configuring, Run: s.settingsUpdate},
		"shells.list":       {Kind: rpc.Ordinary, Run: s.shellsList},
		"shutdown":          {Kind: rpc.Configuring, Run: s.shutdown, WhileStopping: true},
		"session.create":    {Kind: rpc.Configuring, Run: s.sessionCreate},
		"session.configure": {Kind: rpc.Configuring, Run: s.sessionConfigure},
		"session.get":       {Kind: rpc.Configuring, Run: s.sessionGet},
		"session.list":      {Kind: rpc.Configuring, Run: s.sessionList},
		"session.delete":    {Kind: rpc.Configuring, Run: s.sessionDelete},
		"tools.execute":     {Kind: rpc.Ordinary, Prepare: s.prepareExecute, WhileStopping: true},
		"tools.list":        {Kind: rpc.Ordinary, Run: s.toolsList},
		"tools.cancel":      {Kind: rpc.Cancel, Run: s.toolsCancel},
		"turn.cancel":       {Kind: rpc.Cancel, Run: s.turnCancel},
		"audit.query":       {Kind: rpc.Ordinary, Run: s.auditQuery},
		"review.rollback":   {Kind: rpc.Ordinary, Run: s.reviewRollback},
		"approval.resolve":  {Kind: rpc.Configuring, Run: s.approvalResolve},
		"plugins.register":  {Kind: rpc.Configuring, Run: s.pluginsRegister},

		"permissions.list":   {Kind: rpc.Configuring, Run: s.permissionsList},
		"permissions.remove": {Kind: rpc.Configuring, Run: s.permissionsRemove},
	}
	for name, m := range t {
		m.Prepare = namedParams(m.Prepare)
		t[name] = m
	}
	return t
}

// prepareExecute runs on the read goroutine, in arrival order: the
// mutation ticket of a Write/Edit is taken here so that one session's
// mutations apply in the order their requests arrived. No tool call is
// answered on the read goroutine.
func (s *Server) prepareExecute(params json.RawMessage) (rpc.Run, bool) {
	ticket := s.takeTicket(params)
	return func(ctx context.Context) (any, error) { return s.execute(ctx, params, ticket) }, false
}

// namedParams wraps a method's Prepare: every method takes named params
// (PROTOCOL section 1), and one given anything else runs nothing,
// shutdown included, and is answered at once.
func namedParams(prepare func(json.RawMessage) (rpc.Run, bool)) func(json.RawMessage) (rpc.Run, bool) {
	return func(params json.RawMessage) (rpc.Run, bool) {
		if !objectOrAbsent(params) {
			return func(context.Context) (any, error) {
				return nil, invalidParams("invalid params: params must be a JSON object")
			}, true
		}
		if prepare == nil {
			return nil, false
		}
		return prepare(params)
	}
}

// objectOrAbsent says whether params are absent, null or a JSON object.
func objectOrAbsent(params json.RawMessage) bool {
	return len(params) == 0 || string(params) == "null" || params[0] == '{'
}

// decode unmarshals params into v. Absent params are treated as {}. A
// member the method does not take is refused, naming it, the nearest name
// the method does take, and the ones it takes: ignored, a misspelt member
// does nothing silently ({"session_id": ...} would read as a missing
// sessionId, {"permisionMode": "auto"} would change no mode).
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return unknownMember(quoted, jsonFields(v))
		}
		return invalidParams("invalid params: %s", tools.JSONErrorText(err))
	}
	return nil
}

// decodeLenient is decode that ignores members v does not name, for
// initialize, whose clients (LSP-style hosts) send members of their own.
func decodeLenient(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %s", tools.JSONErrorText(err))
	}
	return nil
}

// unknownMember is the error for a member a method does not take
// (quoted as encoding/json quotes it), with the nearest name it takes.
func unknownMember(quoted string, names []string) error {
	name, err := strconv.Unquote(quoted)
	if err != nil {
		name = quoted
	}
	hint := ""
	if near := tools.NearestName(name, names); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return invalidParams("invalid params: unknown member %q%s; this method takes %s", name, hint, strings.Join(names, ", "))
}

// jsonFields lists the JSON member names of the struct v points to.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
