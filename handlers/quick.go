package handlers

import (
	"bytes"
	"io/fs"

	"hostcore/sandbox"
)

// Quick Reads.
//
// A request is handed from the read goroutine to a worker, so that a call
// waiting on a card or a long command never holds up the lines after it
// (a card's reply among them). The hand-off wakes a second thread: on the
// 2-vCPU VMs hostcore is measured on, that is about 100 µs of a small
// Read's round trip, more than the Read itself. So a Read runs on the read
// goroutine instead when:
//
//   - the connection is quiet (Config.Quiet, rpc.Server.Quiet): no input
//     buffered, nothing on a worker, no card waiting for its reply.
//     Should the Read be slow after all (a disk that stalls: a local file
//     system is no promise), it holds up nothing that is under way;
//   - its session exists and has a workspace on a local file system
//     (sandbox.QuickDir: no server to hang a read on);
//   - its path opens through sandbox.QuickOpen: a regular file inside the
//     workspace, with no link, mount or ".." escape on the way, so no
//     outside-path card can follow (a Read inside the roots is allowed in
//     every mode, design section 6) and the denylist does not apply;
//   - the file is at most quickReadMax bytes, so reading it is bounded,
//     and its answer fits, however it is escaped, in what stdout can take
//     now without blocking (Config.Room): a client that writes before it
//     reads cannot make the answer block the reading of its input.
//
// Everything else about the call is unchanged: the same envelope,
// checks, audit and answer, with the file QuickOpen opened standing for
// Resolve and OpenRegular.

// quickReadMax bounds the files a quick Read takes.
const quickReadMax = 1 << 20

// worstAnswer bounds the answer to a Read of a file of size bytes, the
// call's id and path taking idBytes: its text holds at most every byte
// and, per line (at most readDefaultLines of them), a number, a tab and a
// cut marker, and each byte may take six escaped (\u00XX); the rest of
// the envelope is small.
func worstAnswer(size int64, idBytes int) int64 {
	lines := min(size+1, readDefaultLines)
	return 6*(size+lines*48+int64(idBytes)*2+512) + 4096
}

// preOpened is the target of a quick Read, opened on the read goroutine.
type preOpened struct {
	path string // the path argument it was opened for
	file *sandbox.File
	res  sandbox.Resolved
	fi   fs.FileInfo
	// args are rawArgs decoded (decodeFlat), which the call's checks
	// take rather than decode them again.
	rawArgs []byte
	args    map[string]any
}

func (p *preOpened) close() {
	if p != nil && p.file != nil {
		p.file.Close()
		p.file = nil
	}
}

// quickRead decides, on the read goroutine, whether the call tk stands for
// runs there (see above), opening its file if so.
func (s *Server) quickRead(tk *ticket) bool {
	if tk == nil || tk.dup || tk.absent || tk.tool == nil || tk.tool.Name != "Read" || tk.tool.PluginID != "" ||
		tk.sess.WorkspaceRoot == "" || s.cfg.Quiet == nil || !s.cfg.Quiet() {
		return false
	}
	args, ok := decodeFlat(tk.p.Args)
	path, isString := args["path"].(string)
	if !ok || !isString {
		return false
	}
	roots := sandbox.Roots{Workspace: tk.sess.WorkspaceRoot}
	f, res, fi, ok := roots.QuickOpen(&tk.rt.quick, path)
	if !ok {
		return false
	}
	if fi.Size() > quickReadMax || s.cfg.Room == nil || worstAnswer(fi.Size(), len(tk.p.ToolCallID)+len(path)) > s.cfg.Room() {
		// Too big to read here, or its answer might not fit in what the
		// client has left unread: written on this goroutine, it would
		// block the reading of input from a client that writes before
		// it reads.
		f.Close()
		return false
	}
	tk.pre = &preOpened{path: path, file: f, res: res, fi: fi, rawArgs: tk.p.Args, args: args}
	return true
}

// openTarget opens the call's target for reading: the file a quick Read
// opened already, or through OpenRegular.
func (c *call) openTarget() (*sandbox.File, fs.FileInfo, error) {
	if p := c.pre; p != nil && p.file != nil && c.hasTarget && c.target.Abs == p.res.Abs {
		f := p.file
		p.file = nil
		return f, p.fi, nil
	}
	return sandbox.OpenRegular(c.target)
}

// decodeArgs is decodeAny of the call's args, or what quickRead decoded
// of them already.
func (c *call) decodeArgs() (any, error) {
	if p := c.pre; p != nil && p.args != nil && bytes.Equal(p.rawArgs, c.args) {
		return p.args, nil
	}
	return decodeAny(c.args)
}
