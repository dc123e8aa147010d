//go:build unix

package gosym

import (
	"syscall"
	"testing"
)

// BenchmarkBigOpenFloor measures what any Open of a big binary costs
// before it reads anything: opening the file, fstat, mapping it, and
// then unmapping and closing it (which Open and Close leave to the
// mapping's cleanup), with one pread of 512 bytes, the ELF file header
// and more, as Open makes a dozen (BENCHMARKS.md, "Big binaries"). It is
// the floor that BenchmarkBigOpen's gosym side is compared with.
func BenchmarkBigOpenFloor(b *testing.B) {
	for _, path := range bigBenchBinaries(b) {
		b.Run("bin="+bigName(path), func(b *testing.B) {
			var buf [512]byte
			c := startCPU(b)
			for b.Loop() {
				fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil {
					b.Fatal(err)
				}
				m, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := syscall.Pread(fd, buf[:], 0); err != nil {
					b.Fatal(err)
				}
				syscall.Munmap(m)
				syscall.Close(fd)
			}
			c.stop()
		})
	}
}
