#pragma once
// A hint over the views on the first run: what the window shows and the three things a
// new user does with it (edit the design, set the hardware and scenario, read the
// results). "Got it" hides it for good: the dismissal is kept in QSettings (the
// application's organization and name, as main() sets them).
#include <QFrame>

class QLabel;

namespace hdlab::gui {

class FirstRunHint : public QFrame {
  Q_OBJECT
 public:
  // The QSettings key that records the dismissal.
  static constexpr const char* kDismissedKey = "hints/first_run_dismissed";

  // Visible unless dismissed on an earlier run.
  explicit FirstRunHint(QWidget* parent = nullptr);
  QString text() const;

 public slots:
  // Hides the hint and remembers that it was dismissed.
  void dismiss();

 private:
  QLabel* text_;
};

}  // namespace hdlab::gui
