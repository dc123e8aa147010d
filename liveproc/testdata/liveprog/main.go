// Command liveprog is the test program of package liveproc: goroutines
// wait in known states (a channel receive, a select, a sync.Mutex, a
// sleep, a blocking read system call), two spin on threads of their own
// (runtime.LockOSThread), and extra ones (-park N) wait on a channel;
// with -churn, threads are started and ended without pause.
// Once runtime.Stack shows every one of them in its state, it writes that
// output to the file named by -stack and prints "ready ADDR" (the
// address of marker, whose bytes the test reads in its memory); it then
// waits for a line on its standard input and exits, printing "bye".
//
// Until runtime.Stack has been written, the spinners yield in their loops
// (runtime.Gosched), so that the world can stop for it; then they spin
// without calls, for good: run with GODEBUG=asyncpreemptoff=1, nothing
// takes them out of their loops, and the garbage collector is off, so
// that nothing needs to stop them. They hold two Ps for good: GOMAXPROCS
// must leave others to the rest of the program (the test sets 4).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// marker is what the test reads in the process's memory.
var marker = [32]byte{'l', 'i', 'v', 'e', 'p', 'r', 'o', 'c', ' ', 'm', 'a', 'r', 'k', 'e', 'r'}

var (
	quit     atomic.Int32
	tight    atomic.Int32 // the spinners are to stop yielding
	spinning atomic.Int32 // spinners started

	spinningTight atomic.Int32 // spinners that no longer yield
	spins         [2]int64
)

// spinA spins in a loop that calls nothing.
//
//go:noinline
func spinA(n *int64) {
	spinning.Add(1)
	for tight.Load() == 0 {
		*n++
		runtime.Gosched()
	}
	spinningTight.Add(1)
	for quit.Load() == 0 {
		*n++
	}
}

// spinB spins one call deeper, in a function with a frame.
//
//go:noinline
func spinB(n *int64) {
	var pad [8]int64
	pad[*n%8] = 1
	spinBLoop(n, &pad)
}

//go:noinline
func spinBLoop(n *int64, pad *[8]int64) {
	spinning.Add(1)
	for tight.Load() == 0 {
		*n += pad[0]
		runtime.Gosched()
	}
	spinningTight.Add(1)
	for quit.Load() == 0 {
		*n += pad[0]
	}
}

//go:noinline
func chanWait(ch chan int) { <-ch }

//go:noinline
func selectWait(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

//go:noinline
func mutexWait(mu *sync.Mutex) { mu.Lock() }

//go:noinline
func sleepWait() { time.Sleep(time.Hour) }

//go:noinline
func syscallWait(fd int) {
	var b [1]byte
	syscall.Read(fd, b[:])
}

//go:noinline
func parked(ch chan int) { <-ch }

// churnThreads starts and ends threads for good: a goroutine that exits
// locked to its thread ends the thread, and the next needs a new one.
func churnThreads() {
	done := make(chan int)
	for quit.Load() == 0 {
		go func() {
			runtime.LockOSThread()
			done <- 1
		}()
		<-done
	}
}

// states are what runtime.Stack must show before the program is ready:
// a function and the status of its goroutine.
var states = [][2]string{
	{"main.chanWait", "[chan receive]"},
	{"main.selectWait", "[select]"},
	{"main.mutexWait", "[sync.Mutex.Lock]"},
	{"main.sleepWait", "[sleep]"},
	{"main.syscallWait", "[syscall]"},
	{"main.spinA", ""},
	{"main.spinBLoop", ""},
}

func main() {
	stackFile := flag.String("stack", "", "write runtime.Stack's output to `file`")
	park := flag.Int("park", 0, "park `N` more goroutines on a channel")
	churn := flag.Bool("churn", false, "start and end threads without pause")
	flag.Parse()
	debug.SetGCPercent(-1)

	never := make(chan int)
	go chanWait(never)
	go selectWait(never, never)
	var mu sync.Mutex
	mu.Lock()
	go mutexWait(&mu)
	go sleepWait()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		panic(err)
	}
	go syscallWait(fds[0])
	for i, f := range []func(*int64){spinA, spinB} {
		go func() {
			runtime.LockOSThread()
			f(&spins[i])
		}()
	}
	for range *park {
		go parked(never)
	}
	if *churn {
		go churnThreads()
	}

	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if ready(string(buf[:n]), *park) {
			if err := os.WriteFile(*stackFile, buf[:n], 0o644); err != nil {
				panic(err)
			}
			break
		}
		runtime.Gosched()
	}
	tight.Store(1)
	for spinningTight.Load() != 2 {
		runtime.Gosched()
	}
	fmt.Printf("ready %p\n", &marker)
	bufio.NewReader(os.Stdin).ReadString('\n')
	quit.Store(1)
	fmt.Println("bye", marker[0])
	syscall.Write(fds[1], []byte{0})
}

// ready reports whether stack, runtime.Stack's output, shows every
// goroutine of states in its state, and park parked ones.
func ready(stack string, park int) bool {
	if spinning.Load() != 2 || strings.Count(stack, "\nmain.parked(") < park {
		return false
	}
	found := 0
	for _, s := range states {
		for _, g := range strings.Split(stack, "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, "\n"+s[0]+"(") && strings.Contains(header, s[1]) {
				found++
				break
			}
		}
	}
	return found == len(states)
}
