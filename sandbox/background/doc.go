// Package background keeps the Bash commands a session runs in the
// background (Bash with runInBackground): a dev server, a watcher, a long
// build that the agent works beside.
//
// Each command runs through process.Run exactly as a foreground command
// does (the same reaper, process group, cgroup, Landlock policy and kill
// ladder), on a goroutine of its own and under a context that belongs to
// the Registry, not to the call that started it: the call answers at once
// and the command outlives its turn and turn.cancel. What ends it is
// KillShell, the end of its session (session.delete) or of hostcore
// (shutdown, a signal, the client gone): each cancels that context, and
// process.Run returns only once the whole tree is gone.
//
// Output is not streamed as tool.output (there is no call left to carry
// it). Each stream goes to a file of its own in the session's scratch
// directory (bounded by process.SpillMax; bytes past it are counted and
// shown but not saved), and what arrived since the last BashOutput is kept
// in memory as a head and a tail, as a foreground result keeps them, so
// that a chatty server costs flat memory however long it runs.
//
// A session runs at most MaxRunning commands at once: each holds a reaper,
// a command tree and two files open, and an agent that forgets its servers
// must hit a wall it is told about rather than exhaust the machine.
package background
