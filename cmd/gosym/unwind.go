package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/gosym-dev/gosym/elfcore"
	"github.com/gosym-dev/gosym/gosym"
	"github.com/gosym-dev/gosym/internal/mmapfile"
)

func runUnwind(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("unwind")
	frames := f.Int("frames", 100, "print at most `N` frames of each thread")
	b, pos, status := f.open(args, 2, 2, stdout, stderr)
	if b == nil {
		return status
	}
	defer b.Close()
	if *frames < 1 {
		return errorf(stderr, "-frames %d: must be at least 1", *frames)
	}
	// A regular file only, as the binary: a FIFO would block, /dev/zero
	// never end.
	cf, err := mmapfile.Load(pos[1])
	if err != nil {
		return errorf(stderr, "%v", fileError(pos[1], err))
	}
	defer runtime.KeepAlive(cf)
	w := bufio.NewWriter(stdout)
	if err := b.unwindCore(w, pos[1], cf.Bytes(), *frames); err != nil {
		return errorf(stderr, "%v", err)
	}
	if err := w.Flush(); err != nil {
		return errorf(stderr, "%v", err)
	}
	return exitOK
}

// unwindCore prints the stacks of the threads of the core file data, named
// name, at most maxFrames frames each (inlined frames included), to w.
func (b *exe) unwindCore(w io.Writer, name string, data []byte, maxFrames int) error {
	core, err := elfcore.NewFile(bytes.NewReader(data))
	if err != nil {
		return fileError(name, err)
	}
	if a := b.obj.Arch(); a != core.GOARCH() {
		return fmt.Errorf("%s: core of a %q process, binary for %q", name, core.GOARCH(), a)
	}
	rel, err := b.relocation(name, core.Image)
	if err != nil {
		return err
	}
	// The table speaks link-time addresses, the core run-time ones: the
	// walk reads the core through rel's view, and its PCs are printed as
	// the process had them.
	ptr := 8
	if core.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	mem := rel.View(core, ptr, core.ByteOrder)
	var locs []gosym.Location
	for _, th := range core.Threads {
		fmt.Fprintf(w, "thread %d", th.PID)
		if th.Signal != 0 {
			fmt.Fprintf(w, " signal %d", th.Signal)
		}
		fmt.Fprintln(w)
		printed := 0 // frames printed, inlined ones included
		regs := gosym.Regs{PC: rel.ToLink(th.PC), SP: th.SP, LR: rel.ToLink(th.LR)}
		for fr, err := range b.tab.Unwind(regs, mem) {
			if err != nil {
				if ue, ok := err.(*gosym.UnwindError); ok {
					e := *ue
					e.PC = rel.ToRun(e.PC)
					err = &e
				}
				fmt.Fprintf(w, "\tunwinding stopped: %v\n", err)
				break
			}
			locs, err = fr.Func.ResolveLocations(fr.LookupPC(), locs)
			pc := rel.ToRun(fr.PC) // as the process had it
			printed += max(len(locs), 1)
			if printed > maxFrames {
				// A damaged or hostile stack can loop, or be as long as
				// the core: stop where the runtime's tracebacks would.
				fmt.Fprintf(w, "\tunwinding stopped: more than %d frames, at pc %#x sp %#x\n", maxFrames, pc, fr.SP)
				break
			}
			if err != nil || len(locs) == 0 {
				fmt.Fprintf(w, "\t%#x\t%#x\t%s\t%s\n", pc, fr.SP, fr.Func.Name(), noPos)
				continue
			}
			for i, l := range locs {
				inl := ""
				if i < len(locs)-1 {
					inl = "\tinlined"
				}
				fmt.Fprintf(w, "\t%#x\t%#x\t%s\t%s%s\n", pc, fr.SP, l.Function, fileLine(l.File, l.Line), inl)
			}
		}
	}
	return nil
}

// relocation returns where the process of the core, named name, had the
// binary: its load bias, 0 unless the binary is position-independent.
// The binary must be the one the process ran (build ID and entry point,
// elfcore.Image.Relocation). A core without an auxiliary vector (NT_AUXV)
// cannot place a position-independent binary; a fixed one is taken where
// it was linked.
func (b *exe) relocation(name string, image func() (*elfcore.Image, error)) (elfcore.Relocation, error) {
	ef, err := elf.Open(b.path)
	if err != nil {
		return elfcore.Relocation{}, fmt.Errorf("%s: the binary of an ELF core must be ELF: %w", b.path, err)
	}
	defer ef.Close()
	im, err := image()
	if err != nil {
		if ef.Type != elf.ET_DYN {
			return elfcore.Relocation{}, nil
		}
		return elfcore.Relocation{}, fmt.Errorf("%s: %s is position-independent, and the process image does not say where it was loaded: %w", name, b.path, err)
	}
	rel, err := im.Relocation(ef)
	if errors.Is(err, elfcore.ErrMismatch) {
		ran := ""
		if im.Path != "" {
			ran = " (" + im.Path + ")"
		}
		return elfcore.Relocation{}, fmt.Errorf("%s: %s is not the binary the process ran%s: %w", name, b.path, ran, err)
	}
	if err != nil {
		return elfcore.Relocation{}, fmt.Errorf("%s: %w", name, err)
	}
	return rel, nil
}
