// Package process runs one shell command for the agent and guarantees
// that, whatever the command does, Run returns in bounded time, nothing it
// started is left running, and its output costs bounded memory.
//
// # The reaper
//
// Every command runs under a reaper of its own: the hostcore binary
// re-executed in a special mode (MaybeRunReaper, which main calls first).
// The reaper is a child subreaper, so every descendant of the command
// stays its descendant after a double fork, setsid, nohup or set -m. It
// kills that whole tree when the shell exits (so `sleep 100 & echo done`
// answers at once and a grandchild holding the pipes cannot hold the
// call), when hostcore asks (cancel, timeout), and when hostcore dies,
// even by SIGKILL: it notices its control socket's EOF, which the kernel
// delivers whatever ended hostcore.
//
// The reaper says "taken" before it starts the shell, so a reaper killed
// before that ran nothing and Run hands the command to a fresh one. The
// command comes over the control socket, not in the arguments, so that a
// reaper can be started ahead of need (Warm; hostcore's default,
// --warm-reaper=false turns it off): the next reaper starts while the
// model reads the last result. A start of the binary runs every package
// initialiser of hostcore (the schema compiler, SQLite's libc) and costs
// 30 to 50 ms, most of a short command's time; an idle reaper costs one
// process with about 3.5 MiB of memory of its own (the rest is the
// binary's pages, shared with hostcore), runs nothing, and leaves after a
// minute unused, at Close, or when hostcore dies. A command that comes
// while the next reaper is being started waits for that start rather than
// begin a second one. One window stays open: a reaper killed from outside between starting the
// shell and reporting its pid (microseconds) leaves a shell whose pid
// hostcore never learns, so it is not killed; Run still returns, its wait
// for output bounded by the drain delay.
//
// # The sandbox
//
// A command with a Spec.Sandbox runs confined by Landlock (package
// landlock): hostcore makes the policy into its kernel ruleset, and the
// ruleset's descriptor goes to the reaper over the control socket, in a
// message of its own before the spec; the reaper forks the shell from a
// thread that enforces it. Made in hostcore rather than in each reaper,
// the ruleset is kept by the Warm (landlock.Cache) and serves the next
// command of the same policy while every path its plan read is as it
// was: a carved home or /tmp costs hundreds of rules, an open and a
// system call each, where checking the paths costs one lstat each. A
// policy with a terminal is one command's own and is made for it alone.
// Making a ruleset reads the disk: a call waits for it no longer than
// its timeout or its cancel, so a file system that does not answer
// holds no call for ever.
//
// # The kill ladder
//
// Stopping a tree is TERM to every process, a grace period (1 s for
// tool calls, short enough that shutdown still answers within 3 s), then
// KILL rounds until nothing is left or a bound passes (only a process in
// uninterruptible sleep can outlast KILL, and it is then left to init
// rather than hang hostcore). The tree is every process below the reaper,
// including a process whose main thread exited while its other threads
// run. Each KILL round also kills every process group the tree was ever
// seen in: a process that forks and exits in a loop lives shorter than one
// scan of a busy /proc, but its forks stay in its group. Signals go through
// pidfds after checking the parent, so a pid reused by a stranger is never
// signalled.
//
// # A command against its reaper
//
// A command may turn on its reaper. Run sends the reaper SIGCONT every
// 200 ms, so `kill -STOP $PPID` changes nothing. The reaper is
// non-dumpable, so a process of the same user cannot ptrace it. Every
// process of a command inherits a random HOSTCORE_RUN mark; if the reaper
// is killed, hostcore kills the shell's session and every process whose
// environment holds the mark, repeating while it finds any. If a reaper
// sent SIGKILL is still there 2 s later (a root tracer holds it), Run does
// that itself and returns. And hostcore is itself a child subreaper
// (BecomeHostSubreaper): the orphans of a reaper that died become its
// children, and SweepAdopted kills them with their trees and reaps them,
// catching one that re-executed with a fresh environment in a new session.
// Each orphan is pinned by a pidfd while it is an unreaped child, so its pid
// cannot be reused under the sweep.
//
// # The cgroup
//
// Where one can be had (Linux 5.14+, a cgroup2 hierarchy, and the right to
// make a child of hostcore's own cgroup: root, or a cgroup delegated to
// the user), the reaper makes hostcore-<mark> below hostcore's cgroup and
// starts the shell in it with clone3 CLONE_INTO_CGROUP. Every process of
// the command is then born there, whatever session, group or parent it
// moves to, and every KILL round writes cgroup.kill, which ends them all
// at once, forks in flight included: a setsid fork bomb cannot outrun it.
// The cgroup is removed once empty; if the reaper died first, hostcore
// kills and removes it. Without one the tree is what the scans find, and
// two cases stay open: a command that keeps its reaper stopped when
// hostcore itself is SIGKILLed, and a process that calls setsid on every
// fork faster than the scans.
//
// # Output
//
// Each stream keeps its first and last 16 KiB and counts the rest, so
// memory stays flat however much a command prints. Once a stream no longer
// fits, everything is also written to a spill file in the scratch
// directory (up to SpillMax, 1 GiB: a flood until the 300 s timeout would
// otherwise leave tens of gigabytes on the user's disk), so the model can
// read what it was not shown. The spill is written in 1 MiB blocks of
// mapped memory by a goroutine of its own, with O_DIRECT where the file
// system takes it: a flood is written once and rarely read back, and
// through the page cache it would push the user's cached files out. The
// reader of the command's pipe only copies into memory, so a command is
// slowed to the disk's pace only once several blocks are in flight.
//
// Output is also streamed as it comes: chunks of at most 16 KiB, sent at
// most 25 ms after their first byte (half the promised 50 ms, the rest left
// for the pipes and schedulers on the way to the client), never splitting
// a UTF-8 character. Every byte is streamed. Once the command has ended its
// pipes are read to the end; a writer that escaped the tree gets a short
// drain and then loses what it writes later. hostcore's stdout, and a
// command's pipe once a read finds it full, are asked for 1 MiB of buffer
// (Linux, best effort), so a flood crosses them in fewer wake-ups while
// commands that print little leave the user's pipe quota alone.
//
// # Scheduling and descriptors
//
// With --batch-commands the reaper's fork runs as SCHED_BATCH, inherited
// by everything the command starts: batch tasks get no wake-up preemption,
// so a command does not take the CPU from the user's editor or from
// hostcore, and a pipeline's two ends stop trading a shared CPU at every
// write. It is off by default because a command should run as it would in
// the user's terminal (a timing-sensitive test suite would otherwise be
// measured under another policy). Descriptors hostcore inherited above
// stderr are marked close-on-exec at start (KeepInheritedFromCommands), so
// no command receives a sidecar's private channels.
//
// # Platforms
//
// Linux has all of the above. macOS runs the reaper and the ladder over
// process scans, without a cgroup and without the host subreaper. Other
// platforms do not run commands yet.
package process
