package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// workspace is the directory calls run in: --workspace when given, else
// the client's first root, asked for (roots/list) once the client has
// initialized and again whenever it says its roots changed. One MCP
// configuration entry then serves every project the client opens.
type workspace struct {
	log *slog.Logger

	mu    sync.Mutex
	b     Backend
	mode  string
	fixed bool // --workspace: roots are not asked for
	// sessionID is the session of the current workspace ("" while none is
	// bound); problem says why none is.
	sessionID, root, problem string
	// ready is closed once the first answer to roots/list is in (or the
	// client turned out to have no roots): a call waits for it, not for a
	// root that may never come.
	ready     chan struct{}
	readyOnce sync.Once
	// clientRoots: the client declared the roots capability.
	clientRoots bool
	// asked counts the roots/list requests sent: only the answer to the
	// latest is kept, whatever order the answers come in.
	asked uint64
}

// rootsWait bounds how long a call waits for the client's first roots.
const rootsWait = 30 * time.Second

// noRoots is the problem of a connection without --workspace whose
// client has no roots.
const noRoots = "hostcore has no workspace: it was started without --workspace and the MCP client did not " +
	"declare roots, so no call can run; start hostcore with --workspace DIR (an MCP server entry per project), " +
	"or use a client that offers roots"

func newWorkspace(log *slog.Logger) *workspace {
	return &workspace{log: log, ready: make(chan struct{}), problem: noRoots}
}

// use sets what binds a root to its session (Serve, before it serves).
func (w *workspace) use(b Backend, mode string) {
	w.mu.Lock()
	w.b, w.mode = b, mode
	w.mu.Unlock()
}

// bind fixes the workspace (--workspace).
func (w *workspace) bind(root, sessionID string) {
	w.mu.Lock()
	w.fixed, w.root, w.sessionID, w.problem = true, root, sessionID, ""
	w.mu.Unlock()
	w.readyOnce.Do(func() { close(w.ready) })
}

// current is the session calls run in now, "" while none is bound.
func (w *workspace) current() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessionID
}

// session waits for the first roots if they are still to come, and returns
// the session calls run in, or why there is none.
func (w *workspace) session(ctx context.Context) (string, string) {
	select {
	case <-w.ready:
	case <-ctx.Done():
		return "", "the call was cancelled while hostcore waited for the client's roots"
	case <-time.After(rootsWait):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sessionID == "" {
		if w.problem == "" {
			return "", "hostcore has no workspace yet: the MCP client has not answered roots/list"
		}
		return "", w.problem
	}
	return w.sessionID, ""
}

// sawInitialize reads the capabilities of an initialize request (the SDK
// cannot tell a client that declared roots without listChanged from one
// that declared none).
func (w *workspace) sawInitialize(params json.RawMessage) {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(params, &p)
	_, ok := p.Capabilities["roots"]
	w.mu.Lock()
	w.clientRoots = ok
	w.mu.Unlock()
}

// initialized asks for the roots of a client that has them; one without
// them leaves calls with noRoots.
func (w *workspace) initialized(stop context.Context, ss *sdk.ServerSession) {
	w.mu.Lock()
	ask := !w.fixed && w.clientRoots
	w.mu.Unlock()
	if !ask {
		w.readyOnce.Do(func() { close(w.ready) })
		return
	}
	// Not on the SDK's goroutine: its reply comes in on the connection this
	// notification was read from.
	go w.refresh(stop, ss)
}

// refresh asks the client for its roots and binds the first.
func (w *workspace) refresh(stop context.Context, ss *sdk.ServerSession) {
	defer w.readyOnce.Do(func() { close(w.ready) })
	w.mu.Lock()
	if w.fixed {
		// --workspace: a root the client names binds nothing.
		w.mu.Unlock()
		return
	}
	w.asked++
	n, b, mode := w.asked, w.b, w.mode
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(stop, rootsWait)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	var root, problem, sessionID string
	switch {
	case err != nil:
		problem = fmt.Sprintf("hostcore has no workspace: the MCP client's roots/list failed (%v)", err)
	case len(res.Roots) == 0:
		problem = "hostcore has no workspace: the MCP client lists no roots; open a folder or project in the client, or start hostcore with --workspace DIR"
	default:
		root, problem = rootPath(res.Roots[0].URI)
	}
	if problem == "" {
		sessionID, err = b.EnsureSession(ctx, "mcp", root, mode)
		if err != nil {
			problem = fmt.Sprintf("hostcore cannot use the client's first root %s as its workspace: %v", root, err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fixed || n != w.asked {
		return
	}
	if problem != "" {
		w.log.Warn("no workspace from the client's roots", "why", problem)
	} else if root != w.root {
		w.log.Info("workspace from the client's first root", "workspace", root, "sessionId", sessionID)
	}
	w.root, w.sessionID, w.problem = root, sessionID, problem
}

// rootPath is the directory a root's file:// URI names.
func rootPath(uri string) (string, string) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Sprintf("hostcore has no workspace: the client's first root %q is not a file:// URI of a local directory", uri)
	}
	return u.Path, ""
}
