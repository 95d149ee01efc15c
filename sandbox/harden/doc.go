// Package harden closes hostcore to the processes it runs.
//
// A command runs as the user who runs hostcore. Without more, it could
// ptrace hostcore, open /proc/<hostcore>/fd/0 and write requests into
// hostcore's input (switch the permission mode, answer a card), open
// /proc/<hostcore>/fd/1 and write forged notifications to the client, or
// take any descriptor with pidfd_getfd. Self makes the process
// non-dumpable: the kernel then grants those accesses, and core dumps,
// only to a process with CAP_SYS_PTRACE over it (root), never to one of
// the same user.
//
// The flag is per process and execve resets it, so every hostcore
// process calls Self first thing: the server in both modes and the
// re-executed reapers, which hold the command's pipes and hostcore's
// control socket.
package harden
