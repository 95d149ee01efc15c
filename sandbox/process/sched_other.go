//go:build !linux

package process

// forkBatch runs fork: SCHED_BATCH is Linux's (see sched_linux.go).
func forkBatch(fork func() (int, error)) (int, error) { return fork() }
