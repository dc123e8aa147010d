// Command unwindprog is the test program of gosym's runtime unwinding
// oracle (unwind_test.go): goroutines spin on their own threads at the
// bottom of call chains of varied frames (a leaf without a frame, a
// function with one, closures, methods), others are parked, and the
// process then dies of SIGQUIT under GOTRACEBACK=crash, so that the
// runtime prints every goroutine's frames (pc=, sp=) and the registers of
// every thread, and leaves a core file.
//
// It prints "ready" once every spinner spins; with the argument "quit" it
// then sends itself SIGQUIT. It builds with every Go release from 1.12.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

var spinning int32

// spinLeaf spins in a function without a frame: on link-register
// machines its return address stays in LR.
//
//go:noinline
func spinLeaf() {
	atomic.AddInt32(&spinning, 1)
	for {
	}
}

var sink [16]int

//go:noinline
func use(p *[16]int) { sink = *p }

// spinFramed spins in a function with a frame, which has saved its
// return address.
//
//go:noinline
func spinFramed(n int) {
	var local [16]int
	local[n%16] = n
	use(&local)
	atomic.AddInt32(&spinning, 1)
	for {
	}
}

//go:noinline
func chainA(n int, leaf bool) int {
	var pad [8]int
	if n == 0 {
		if leaf {
			spinLeaf()
		}
		spinFramed(n)
		return 0
	}
	if n%3 == 0 {
		f := func(m int) int { return chainB(m, leaf) + pad[m%8] }
		return f(n - 1)
	}
	if n%5 == 0 {
		var t chainer
		return t.next(n-1, leaf)
	}
	pad[n%8] = chainB(n-1, leaf)
	return pad[n%8] + 1
}

//go:noinline
func chainB(n int, leaf bool) int {
	var big [64]byte
	big[n%64] = byte(n)
	return chainA(n, leaf) + int(big[(n+1)%64])
}

type chainer struct{ x [3]int }

//go:noinline
func (c *chainer) next(n int, leaf bool) int {
	c.x[n%3] = n
	return chainA(n, leaf) + c.x[0]
}

//go:noinline
func parked(n int, ch chan int) int {
	if n == 0 {
		return <-ch
	}
	return parked(n-1, ch) + 1
}

func main() {
	depths := []int{40, 20, 7} // under 100 frames: longer tracebacks elide frames
	runtime.GOMAXPROCS(len(depths) + 2)
	for i, d := range depths {
		go chainA(d, i%2 == 0)
	}
	go parked(10, make(chan int))
	for atomic.LoadInt32(&spinning) < int32(len(depths)) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	fmt.Println("ready")
	if len(os.Args) > 1 && os.Args[1] == "quit" {
		syscall.Kill(os.Getpid(), syscall.SIGQUIT)
	}
	select {}
}
