#include "common/thread_pool.h"

namespace theo {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_)
    w.join();
}

void ThreadPool::run(std::size_t count, const std::function<void(std::size_t)>& task) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (std::size_t i = 0; i < count; ++i)
      task(i);
    return;
  }
  std::lock_guard submit(submit_mu_);
  {
    std::lock_guard lock(mu_);
    task_ = &task;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    busy_ = static_cast<unsigned>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  drain();
  std::exception_ptr error;
  {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [this] { return busy_ == 0; });
    task_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

void ThreadPool::drain() {
  for (;;) {
    const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) return;
    try {
      (*task_)(i);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::worker_loop() {
  unsigned long long seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain();
    std::lock_guard lock(mu_);
    if (--busy_ == 0) done_cv_.notify_one();
  }
}

}  // namespace theo
