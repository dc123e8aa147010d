package object

import "github.com/gosym-dev/gosym/internal/machofile"

// Data returns the bytes of a File made by Open.
func Data(f *File) []byte { return f.data.Bytes() }

// Mapped reports whether the bytes of a File made by Open are mapped.
func Mapped(f *File) bool { return f.data.Mapped() }

// PickArch returns the architecture NewBytes chooses of the universal file
// in fat when running on goarch.
func PickArch(fat []byte, goarch string) string {
	files, err := machofile.NewFat(fat)
	if err != nil {
		return err.Error()
	}
	return pickArch(files, goarch).Arch()
}
