package rpc

import "time"

// InputSpin is how long, by default (--input-spin), a read of stdin that
// finds nothing waiting keeps looking before it sleeps, while the client
// sends requests back to back.
//
// A client that sends its next request as soon as it has read an answer
// (an agent loop's tool calls, one after another) then finds hostcore
// awake: a thread asleep in the kernel costs the round trip its wake-up,
// which on the benchmark VM was about a third of a small Read's (README
// "Benchmarks"). The spin is adaptive, as a mutex's is: a read spins only
// when the last one's data came within 2*InputSpin, so a client that
// pauses between requests (a model thinking) costs one failed spin per
// pause, and an idle hostcore costs nothing. A container held to less
// than two CPUs of quota still gets GOMAXPROCS 2 from Go: --input-spin 0
// turns the spin off there.
const InputSpin = 100 * time.Microsecond
