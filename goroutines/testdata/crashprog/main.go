// Command crashprog is the test program of package goroutines' runtime
// oracle: it parks goroutines in known states (channel receive and send,
// select, sync.Mutex, sync.WaitGroup, sleep, a pipe read through the poller, a blocking read system call, a
// loop running on its own thread), then dereferences nil, so that under
// GOTRACEBACK=crash the runtime prints every goroutine and the process
// leaves a core file. It builds with every Go release from 1.12.
package main

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	started int32
	spun    int32
	mu      sync.Mutex
	wg      sync.WaitGroup
)

//go:noinline
func recv(ch chan int) int {
	atomic.AddInt32(&started, 1)
	return <-ch
}

//go:noinline
func send(ch chan int) {
	atomic.AddInt32(&started, 1)
	ch <- 1
}

//go:noinline
func selecting(a, b chan int) int {
	atomic.AddInt32(&started, 1)
	select {
	case x := <-a:
		return x
	case y := <-b:
		return y
	}
}

//go:noinline
func locking() {
	atomic.AddInt32(&started, 1)
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func waiting() {
	atomic.AddInt32(&started, 1)
	wg.Wait()
}

//go:noinline
func sleeping() {
	atomic.AddInt32(&started, 1)
	time.Sleep(time.Hour)
}

//go:noinline
func reading(r *os.File) {
	atomic.AddInt32(&started, 1)
	var b [1]byte
	r.Read(b[:])
}

//go:noinline
func blockingRead(fd int) {
	atomic.AddInt32(&started, 1)
	var b [1]byte
	syscall.Read(fd, b[:])
}

//go:noinline
func spin() {
	atomic.StoreInt32(&spun, 1)
	for {
	}
}

//go:noinline
func deref(p *int) int {
	return *p
}

func main() {
	runtime.GOMAXPROCS(4)
	mu.Lock()
	wg.Add(1)
	go recv(make(chan int))
	go send(make(chan int))
	go selecting(make(chan int), make(chan int))
	go locking()
	go waiting()
	go sleeping()
	r, _, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	go reading(r)
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		panic(err)
	}
	go blockingRead(fds[0])
	go spin()
	for atomic.LoadInt32(&started) < 8 || atomic.LoadInt32(&spun) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	println(deref(nil))
}
