// Command cgoprog is the cgo test program of package goroutines' runtime
// oracle (linux, CGO_ENABLED=1). It parks goroutines across every cgo
// boundary the runtime's traceback crosses, then dereferences nil, so
// that under GOTRACEBACK=crash the runtime prints every goroutine and the
// process leaves a core file:
//
//   - inC: blocked in a C function (sleep) called through cgo: status
//     syscall, its thread runs C code on its g0 stack after asmcgocall;
//   - callback: Go called back from C (C calls an //export function),
//     parked on a channel: Go → cgocall → C → cgocallback → Go;
//   - nested: Go → C → Go → C, blocked in the inner C call (syscall);
//   - spinning: Go → C → Go, spinning on its own thread (running);
//   - a thread created by C (pthread_create) that calls Go, parked on a
//     channel: a goroutine of an extra M, whose stack starts at
//     cgocallback;
//   - a plain goroutine parked on a channel receive, for contrast.
//
// With the argument "quit" it sends itself SIGQUIT instead: every thread
// then prints the goroutine it runs. With "ready" it prints "ready" on its
// standard output and waits (main parked in a select with no cases), to
// be dumped by gdb's gcore and then killed by SIGQUIT. With "systemstack",
// "mcall" or "morestack" it starts nothing else and loops (memstats,
// yield, grow) through that stack switch, for a debugger to stop a
// running goroutine's thread on its g0 stack there.
package main

/*
#include <pthread.h>
#include <unistd.h>

extern void goParked(int);
extern void goNested(int);
extern void goSpin(int);
extern void goFromCThread(int);

static void blockInC(void) { for (;;) sleep(3600); }
static void callParked(int x) { goParked(x); }
static void callNested(int x) { goNested(x); }
static void callSpin(int x) { goSpin(x); }

static void *cThread(void *arg) { goFromCThread(0); return 0; }
static int startCThread(void) {
	pthread_t t;
	return pthread_create(&t, 0, cThread, 0);
}
*/
import "C"

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	started int32
	spun    int32
	// Nothing is ever sent or received on the other side of these.
	never, nobody, nothing = make(chan int), make(chan int), make(chan int)
)

//go:noinline
func inC() {
	atomic.AddInt32(&started, 1)
	C.blockInC()
}

//go:noinline
func callback() { C.callParked(1) }

//export goParked
func goParked(x C.int) {
	atomic.AddInt32(&started, 1)
	<-never
}

//go:noinline
func nested() { C.callNested(2) }

//export goNested
func goNested(x C.int) {
	atomic.AddInt32(&started, 1)
	C.blockInC()
}

//go:noinline
func spinning() { C.callSpin(3) }

//export goSpin
func goSpin(x C.int) {
	atomic.StoreInt32(&spun, 1)
	for {
	}
}

//export goFromCThread
func goFromCThread(x C.int) {
	atomic.AddInt32(&started, 1)
	nobody <- 1
}

//go:noinline
func recv() {
	atomic.AddInt32(&started, 1)
	<-nothing
}

//go:noinline
func deref(p *int) int {
	return *p
}

// memstats calls runtime.ReadMemStats for ever: each call stops the
// world and runs runtime.readmemstats_m on the thread's g0 stack
// (systemstack) while the goroutine is running.
//
//go:noinline
func memstats() {
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
	}
}

// yield calls runtime.Gosched for ever: each call switches to the
// thread's g0 stack with mcall (runtime.gosched_m) while the goroutine is
// running.
//
//go:noinline
func yield() {
	for {
		runtime.Gosched()
	}
}

// grow starts goroutines that recurse deep enough to grow their stacks,
// one after the other, for ever: each growth switches to the thread's g0
// stack through runtime.morestack (runtime.newstack) while the goroutine
// is running.
//
//go:noinline
func grow() {
	for {
		done := make(chan int)
		go func() { done <- deep(64) }()
		<-done
	}
}

//go:noinline
func deep(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%256])
}

func main() {
	if len(os.Args) > 1 {
		loop := map[string]func(){"systemstack": memstats, "mcall": yield, "morestack": grow}[os.Args[1]]
		if loop != nil {
			os.Stdout.WriteString("ready\n")
			loop()
		}
	}
	runtime.GOMAXPROCS(4)
	go inC()
	go callback()
	go nested()
	go spinning()
	go recv()
	if C.startCThread() != 0 {
		panic("pthread_create")
	}
	for atomic.LoadInt32(&started) < 5 || atomic.LoadInt32(&spun) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if len(os.Args) > 1 && os.Args[1] == "quit" {
		syscall.Kill(os.Getpid(), syscall.SIGQUIT)
		select {}
	}
	if len(os.Args) > 1 && os.Args[1] == "ready" {
		os.Stdout.WriteString("ready\n")
		select {}
	}
	println(deref(nil))
}
