#include "thread_pool.hpp"

#include <algorithm>

namespace hdlab::executor::cpu {

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(threads, 1) - 1;
  workers_.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    std::int64_t begin = 0, end = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_chunk_ >= job_.n) return;
      begin = next_chunk_;
      end = std::min(job_.n, begin + job_.grain);
      next_chunk_ = end;
    }
    try {
      (*job_.body)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_chunk_ = job_.n;  // stop handing out work
    }
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    done_.notify_one();
  }
}

void ThreadPool::parallel_for(std::int64_t n, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  if (workers_.empty() || n <= grain) {
    body(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = Job{&body, n, grain};
    next_chunk_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::exception_ptr error;
  {
    // Every worker checks in for this generation, so none can touch `body` after we return.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == static_cast<int>(workers_.size()); });
    error = error_;
    job_ = Job{};
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace hdlab::executor::cpu
