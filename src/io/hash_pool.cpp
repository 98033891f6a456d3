// The serialization's thread pool (io/hash_pool.h).

#include "io/hash_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace theo::detail::serial {

namespace {

// One parallel_for call: helpers and the caller take indices from `next` until none is left.
struct Job {
  const std::function<void(std::size_t)>* task = nullptr;
  std::size_t count = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mu;
  std::condition_variable finished;
  std::exception_ptr error;

  // Runs indices until none is left; true when this call finished the last one.
  void work() {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        (*task)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      if (done.fetch_add(1) + 1 == count) {
        std::lock_guard<std::mutex> lock(mu);
        finished.notify_all();
      }
    }
  }
};

class Pool {
 public:
  explicit Pool(unsigned workers) {
    for (unsigned i = 0; i < workers; ++i)
      threads_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      t.join();
  }
  unsigned workers() const { return static_cast<unsigned>(threads_.size()); }

  // Queues `helpers` turns at `job` (a helper that comes late finds no index left and leaves).
  void offer(const std::shared_ptr<Job>& job, unsigned helpers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (unsigned i = 0; i < helpers; ++i)
        queue_.push_back(job);
    }
    if (helpers == 1) {
      cv_.notify_one();
    } else {
      cv_.notify_all();
    }
  }

 private:
  void loop() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_ && queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->work();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
};

Pool& pool() {
  // Never destroyed: tasks may still be queued by threads that outlive static destruction.
  static Pool* p = new Pool(hardware_threads() - 1);
  return *p;
}

}  // namespace

unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, unsigned threads,
                  const std::function<void(std::size_t)>& task) {
  if (count == 0) return;
  const unsigned want = threads == 0 ? hardware_threads() : threads;
  const std::size_t helpers =
      std::min<std::size_t>({count - 1, want - 1, std::size_t{hardware_threads() - 1}});
  if (helpers == 0) {
    for (std::size_t i = 0; i < count; ++i)
      task(i);
    return;
  }
  auto job = std::make_shared<Job>();
  job->task = &task;
  job->count = count;
  pool().offer(job, static_cast<unsigned>(helpers));
  job->work();
  {
    std::unique_lock<std::mutex> lock(job->mu);
    job->finished.wait(lock, [&] { return job->done.load() == count; });
  }
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace theo::detail::serial
