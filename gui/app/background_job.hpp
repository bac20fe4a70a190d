#pragma once
// One piece of long work at a time, off the UI thread: the work runs on Qt's global
// thread pool with a progress callback that also asks whether to go on; progress, the
// result or the ConfigError arrive on the UI thread. Starting a new job cancels the
// running one and drops its result (the design changed under it).
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrent>

#include "hdlab/gui_core/tradeoffs.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui {

// When to start the work an edit asks for: a lone edit at once (a 0 ms timer, so the
// signals of one edit are taken together), an edit within kEditBurstMs of the last start
// (a spin box arrow held down) when that interval is over: at most one start per
// interval during a burst, and the burst's last edit is always computed.
inline constexpr qint64 kEditBurstMs = 150;
inline int edit_delay_ms(const QElapsedTimer& last_start) {
  const qint64 since = last_start.isValid() ? last_start.elapsed() : kEditBurstMs;
  return static_cast<int>(std::max<qint64>(0, kEditBurstMs - since));
}

template <class Result>
class BackgroundJob {
 public:
  using Work = std::function<Result(const gui_core::ProgressFn&)>;
  struct Outcome {
    std::optional<Result> value;
    std::optional<model::ConfigError> error;
  };

  explicit BackgroundJob(QObject* context) : context_(context) {}
  ~BackgroundJob() { cancel(); }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  std::function<void(int done, int total)> on_progress;
  std::function<void(const Result&)> on_result;
  std::function<void(const model::ConfigError&)> on_error;
  std::function<void()> on_idle;  // after a result, an error or a cancel

  void start(Work work) {
    cancel();
    auto* watcher = new QFutureWatcher<Outcome>(context_);
    watcher_ = watcher;
    QObject::connect(watcher, &QFutureWatcher<Outcome>::progressValueChanged, context_, [this, watcher](int v) {
      if (watcher == watcher_ && on_progress) on_progress(v, watcher->progressMaximum());
    });
    QObject::connect(watcher, &QFutureWatcher<Outcome>::finished, context_, [this, watcher] { finish(watcher); });
    watcher->setFuture(QtConcurrent::run([work = std::move(work)](QPromise<Outcome>& promise) {
      Outcome out;
      try {
        out.value = work([&promise](int done, int total) {
          promise.setProgressRange(0, total);
          promise.setProgressValue(done);
          return !promise.isCanceled();
        });
      } catch (const model::ConfigError& e) {
        out.error = e;
      } catch (const std::exception& e) {
        out.error = model::ConfigError("", e.what());
      }
      promise.addResult(std::move(out));
    }));
  }

  // Asks the running work to stop; its result, if any arrives, is dropped.
  void cancel() {
    if (!watcher_) return;
    QFutureWatcher<Outcome>* w = watcher_;
    watcher_ = nullptr;
    w->disconnect(context_);
    w->cancel();
    // The watcher outlives the work only as long as the future needs it.
    QObject::connect(w, &QFutureWatcher<Outcome>::finished, w, &QObject::deleteLater);
    if (w->isFinished()) w->deleteLater();
    if (on_idle) on_idle();
  }

  bool running() const { return watcher_ != nullptr; }

  // Blocks until the current job is done (tests; shutdown).
  void wait() {
    if (watcher_) watcher_->waitForFinished();
  }

 private:
  void finish(QFutureWatcher<Outcome>* watcher) {
    if (watcher != watcher_) return;
    watcher_ = nullptr;
    watcher->deleteLater();
    const QFuture<Outcome> f = watcher->future();
    if (!f.isCanceled() && f.resultCount() > 0) {
      const Outcome out = f.result();
      if (out.error && on_error) on_error(*out.error);
      if (out.value && on_result) on_result(*out.value);
    }
    if (on_idle) on_idle();
  }

  QObject* context_;
  QFutureWatcher<Outcome>* watcher_ = nullptr;
};

}  // namespace hdlab::gui
