#pragma once
// The threads that hash and check the pieces of serialized objects (docs/serialization.md): one
// process-wide pool, started on first use with one thread per hardware thread less one. A call
// runs its own tasks too and returns when all of them are done, so calls from many threads at once
// (a server encoding a batch on a thread pool of its own) share the pool without waiting for each
// other's jobs and without deadlock, and a task may itself call parallel_for.

#include <cstddef>
#include <functional>

namespace theo::detail::serial {

// Runs task(i) for every i in [0, count) on up to `threads` threads (the caller included; 0: every
// hardware thread, 1: the caller alone). Rethrows the first exception a task threw, after every
// task has finished.
void parallel_for(std::size_t count, unsigned threads,
                  const std::function<void(std::size_t)>& task);

// The hardware threads (at least 1).
unsigned hardware_threads();

}  // namespace theo::detail::serial
