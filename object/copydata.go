package object

import "github.com/gosym-dev/gosym/internal/objfile"

func init() {
	objfile.CopyData = copyData
}

// copyData is objfile.CopyData: src is read from the file of a File made
// by Open (with pread, until Close), and copied from memory otherwise.
func copyData(obj any, dst, src []byte) int {
	if f, ok := obj.(*File); ok && f.data != nil {
		return f.data.Copy(dst, src)
	}
	return copy(dst, src)
}
