//go:build !unix

package process

// getBlock takes a kept block or makes a heap one (there is no direct I/O
// here, so no alignment to keep).
func getBlock() *[]byte {
	select {
	case b := <-spillFree:
		return b
	default:
	}
	b := make([]byte, spillBlock)
	return &b
}

func putBlock(b *[]byte) {
	*b = (*b)[:spillBlock]
	select {
	case spillFree <- b:
	default:
	}
}
