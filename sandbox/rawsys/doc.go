// Package rawsys makes the system calls of a small Read's round trip
// without telling the Go scheduler about them.
//
// A call through package syscall or x/sys/unix enters and leaves the
// runtime's syscall state. When every processor has been idle for a while
// (between two requests of a client that waits for each answer), the
// runtime's monitor thread sleeps deeply, and the first such call wakes
// it: a futex wake, and then the monitor polls every 20 µs on the other
// vCPU until the processors are idle again. On the benchmark VM that was
// about half of hostcore's futex and nanosleep calls and a sixth of its
// CPU per small Read (see the README's Benchmarks).
//
// A raw call keeps its goroutine running and its processor held for as
// long as the call lasts: nothing else may run on that processor, and a
// garbage collection waits for the call to return. So these functions are
// for calls that cannot wait on anything outside this machine:
//
//   - reads and writes of a descriptor in non-blocking mode (a pipe or
//     socket hostcore made non-blocking on a description of its own);
//   - calls on files of a local disk or memory file system (LocalFS),
//     which may wait for the disk, never for a server or a FUSE daemon.
//
// Anything else uses the ordinary calls. Outside Linux the functions are
// the ordinary calls.
package rawsys
