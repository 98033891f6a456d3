#pragma once
// A fixed pool of worker threads that runs index-parallel jobs; the calling thread takes part.
// One job runs at a time (concurrent callers queue up), so jobs must not submit nested jobs.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace theo {

class ThreadPool {
 public:
  // `threads` counts the caller: 1 means no worker threads at all.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs task(i) for every i in [0, count), returns when all are done and rethrows the first
  // exception a task threw.
  void run(std::size_t count, const std::function<void(std::size_t)>& task);

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex submit_mu_;
  std::mutex mu_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  unsigned long long generation_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace theo
