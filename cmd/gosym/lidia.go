package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gosym-dev/gosym/lidia"
)

func runLidia(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := newFlags("lidia")
	out := f.String("o", "", "write the Lidia file to `OUT` (required; - for standard output)")
	lines := f.Bool("lines", true, "include line tables")
	files := f.Bool("files", true, "include source file names")
	inlines := f.Bool("inlines", true, "include the ranges of inlined calls")
	pos, status, ok := f.parse(args, 1, 1, stdout, stderr)
	if !ok {
		return status
	}
	if *out == "" {
		fmt.Fprintf(stderr, "gosym lidia: missing -o OUT\n")
		f.printUsage(stderr, false)
		return exitUsage
	}
	b, err := openBinary(pos[0])
	if err != nil {
		return errorf(stderr, "%v", err)
	}
	defer b.Close()
	opts := []lidia.Option{lidia.WithLines(*lines), lidia.WithFiles(*files), lidia.WithInlines(*inlines)}

	p := startProgress(stderr, fmt.Sprintf("gosym lidia: %s: %d functions", b.path, b.tab.NumFunctions()))
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		return lidia.Write(p.counting(w), b.tab, opts...)
	})
	p.stop()
	if err != nil {
		return errorf(stderr, "%v", describe(b.path, err))
	}
	return exitOK
}

// Progress display settings; tests change them.
var (
	// isTerminal reports whether w is a terminal.
	isTerminal = func(w io.Writer) bool {
		f, ok := w.(*os.File)
		if !ok {
			return false
		}
		fi, err := f.Stat()
		return err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	progressDelay = time.Second            // quiet for quick work
	progressTick  = 200 * time.Millisecond // refresh interval
)

// A progress shows, on a terminal, what a long piece of work is doing:
// a message, the time spent, and the bytes written so far. lidia.Write
// builds its tables before writing anything, so during that phase only
// the time moves.
type progress struct {
	w       io.Writer
	msg     string
	start   time.Time
	delay   time.Duration // quiet for work that takes less; < 0 if w is not a terminal
	mu      sync.Mutex
	written int64
	shown   bool
	done    chan struct{}
	wg      sync.WaitGroup
}

// startProgress starts showing progress on w if it is a terminal.
func startProgress(w io.Writer, msg string) *progress {
	p := &progress{w: w, msg: msg, start: time.Now(), delay: progressDelay, done: make(chan struct{})}
	if !isTerminal(w) {
		p.delay = -1
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-time.After(p.delay):
		case <-p.done:
			return
		}
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			p.show()
			select {
			case <-t.C:
			case <-p.done:
				return
			}
		}
	}()
	return p
}

func (p *progress) show() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%s, %.1fs", p.msg, time.Since(p.start).Seconds())
	if p.written > 0 {
		line += fmt.Sprintf(", %.1f MB written", float64(p.written)/1e6)
	}
	// Carriage return, the line, and erase to its end.
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
	p.shown = true
}

// stop stops the display and, if anything was shown or the work took
// longer than the delay, shows the final line (whether the display's
// goroutine ran meanwhile depends on the scheduler).
func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	if p.shown || p.delay >= 0 && time.Since(p.start) >= p.delay {
		p.show()
		fmt.Fprintln(p.w)
	}
}

// counting returns a writer that writes to w and counts the bytes.
func (p *progress) counting(w io.Writer) io.Writer { return countingWriter{w, p} }

type countingWriter struct {
	w io.Writer
	p *progress
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.mu.Lock()
	c.p.written += int64(n)
	c.p.mu.Unlock()
	return n, err
}
