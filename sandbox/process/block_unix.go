//go:build unix

package process

import "golang.org/x/sys/unix"

// Blocks are mapped memory, outside the Go heap: page-aligned as direct
// I/O needs, given back to the system as soon as they are unmapped, and
// never churned through the collector (which, with a sync.Pool of heap
// blocks, grew hostcore's memory under load).
func getBlock() *[]byte {
	select {
	case b := <-spillFree:
		return b
	default:
	}
	b, err := unix.Mmap(-1, 0, spillBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		// No mapping to be had: a heap block. It may not be aligned for
		// direct I/O; a direct write from it is refused (EINVAL) and the
		// writer goes on through the cache.
		b = make([]byte, spillBlock)
	}
	return &b
}

func putBlock(b *[]byte) {
	*b = (*b)[:spillBlock]
	select {
	case spillFree <- b:
	default:
		unix.Munmap(*b) // fails harmlessly for a heap block
	}
}
