package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox/process"
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

// CallWithTimeout is CallWithin for a client that acts on a reply as it
// comes (nothing to wait behind): call, with ctx ended d after now (0: no
// bound).
func CallWithTimeout(ctx context.Context, d time.Duration, call func(context.Context) error) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return call(ctx)
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
	// (process.Warm): about 25 ms off each command, at the price of an idle
	// child process between commands. Off by default, so that no process
	// of hostcore's outlives a call.
	WarmReaper bool
	// BatchCommands runs Bash commands as batch tasks (process.Spec.Batch):
	// off by default, so that a command runs as it would in the user's
	// terminal.
	BatchCommands bool
}

// Server holds hostcore's state for one connection.
type Server struct {
	cfg Config

	methodsOnce sync.Once
	methodMap   map[string]method
	store       *store.Store
	client      Client
	log         *slog.Logger
	grants      perms.Grants
	tools       *tools.Registry
	slots       chan struct{} // global mutation slots
	warm        *process.Warm // a reaper started ahead for the next Bash command; nil unless Config.WarmReaper
	// pluginTimeout bounds every plugin call (pluginTimeout; tests shorten it).
	pluginTimeout time.Duration

	mu        sync.Mutex
	sessions  map[string]*runtime // in-memory state per session id
	pathLocks map[string]*pathLock
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
	return s, nil
}

// Close lets go of what the Server keeps ready between calls (the warm
// reaper) and waits until it has. Call it once the connection is done.
func (s *Server) Close() {
	if s.warm != nil {
		s.warm.Close()
	}
}

// method is one entry of the method table.
type method struct {
	inline bool // configuring methods finish before the next line is read
	run    func(ctx context.Context, params json.RawMessage) (any, error)
}

// Route implements rpc.Dispatcher. It runs on the read goroutine, in
// arrival order: the mutation ticket of a Write/Edit is taken here so that
// one session's mutations apply in the order their requests arrived.
func (s *Server) Route(name string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	if !objectOrAbsent(params) {
		// Every method takes named params (PROTOCOL section 1); one given
		// anything else runs nothing, shutdown included.
		if _, ok := s.methods()[name]; ok || name == "tools.execute" {
			return func(context.Context) (any, error) {
				return nil, invalidParams("invalid params: params must be a JSON object")
			}, true
		}
		return nil, false
	}
	if name == "tools.execute" {
		ticket := s.takeTicket(params)
		return func(ctx context.Context) (any, error) { return s.execute(ctx, params, ticket) }, false
	}
	m, ok := s.methods()[name]
	if !ok {
		return nil, false
	}
	return func(ctx context.Context) (any, error) { return m.run(ctx, params) }, m.inline
}

// Relieves names the methods that free the in-flight budget instead of
// using it (rpc.Relief): a client whose budget is filled by calls waiting
// on cards must still be able to cancel them.
func (s *Server) Relieves(name string) bool {
	return name == "tools.cancel" || name == "turn.cancel"
}

// RunsWhileStopping names the methods still run once hostcore is
// stopping (rpc.Finishing): a tool call, which answers as aborted and is
// audited, shutdown again (answered {}), and an unknown method (still
// -32601). Any other is refused with SHUTTING_DOWN: a setting or session
// changed after shutdown would be lost or half made.
func (s *Server) RunsWhileStopping(name string) bool {
	_, known := s.methods()[name]
	return name == "tools.execute" || name == "shutdown" || !known
}

// Inline says whether Route runs name inline (rpc.Dispatcher).
func (s *Server) Inline(name string) bool {
	m, ok := s.methods()[name]
	return ok && m.inline
}

func (s *Server) methods() map[string]method {
	s.methodsOnce.Do(func() { s.methodMap = s.methodTable() })
	return s.methodMap
}

func (s *Server) methodTable() map[string]method {
	return map[string]method{
		"initialize":        {true, s.initialize},
		"settings.get":      {true, s.settingsGet},
		"settings.update":   {true, s.settingsUpdate},
		"shells.list":       {false, s.shellsList},
		"shutdown":          {true, s.shutdown},
		"session.create":    {true, s.sessionCreate},
		"session.configure": {true, s.sessionConfigure},
		"session.get":       {true, s.sessionGet},
		"session.list":      {true, s.sessionList},
		"session.delete":    {true, s.sessionDelete},
		"tools.list":        {false, s.toolsList},
		"tools.cancel":      {false, s.toolsCancel},
		"turn.cancel":       {false, s.turnCancel},
		"audit.query":       {false, s.auditQuery},
		"review.rollback":   {false, s.reviewRollback},
		"approval.resolve":  {true, s.approvalResolve},
		"plugins.register":  {true, s.pluginsRegister},
	}
}

// objectOrAbsent says whether params are absent, null or a JSON object.
func objectOrAbsent(params json.RawMessage) bool {
	return len(params) == 0 || string(params) == "null" || params[0] == '{'
}

// decode unmarshals params into v strictly enough to name a wrong field.
// Absent params are treated as {}.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %s", tools.JSONErrorText(err))
	}
	return nil
}

// decodeStrict is decode for the methods that change state
// (session.create, session.configure, settings.update): a member the
// method does not take is refused, naming the ones it does. Ignored, a
// misspelt one did nothing, silently: {"workspace": "/src"} made a
// Temporary session, {"permisionMode": "auto"} changed no mode.
func decodeStrict(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return invalidParams("invalid params: unknown member %s; this method takes %s", name, strings.Join(jsonFields(v), ", "))
		}
		return invalidParams("invalid params: %s", tools.JSONErrorText(err))
	}
	return nil
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
