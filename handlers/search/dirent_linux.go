package search

import (
	"encoding/binary"
	"syscall"
)

// readDirents lists the directory open as fd with getdents64 into buf,
// calling fn for every entry but "." and "..". Reading the raw records keeps
// the file type from the kernel (no stat) and allocates only the names.
func readDirents(fd int, buf []byte, fn func(name string, typ entryType)) error {
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return nil
			}
			dtype := buf[off+18]
			nameb := buf[off+19 : off+reclen]
			for i, c := range nameb {
				if c == 0 {
					nameb = nameb[:i]
					break
				}
			}
			off += reclen
			if len(nameb) == 0 || (nameb[0] == '.' && (len(nameb) == 1 || (len(nameb) == 2 && nameb[1] == '.'))) {
				continue
			}
			var typ entryType
			switch dtype {
			case syscall.DT_REG:
				typ = typeFile
			case syscall.DT_DIR:
				typ = typeDir
			case syscall.DT_LNK:
				typ = typeSymlink
			case syscall.DT_UNKNOWN:
				typ = typeOther // resolved with lstat by the caller
			default:
				typ = typeSpecial // fifo, socket, device: never searched
			}
			fn(string(nameb), typ)
		}
	}
}
