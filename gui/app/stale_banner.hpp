#pragma once
// A banner over a view that shows results of the last valid input while an editor holds
// input that does not parse: it names what is shown and the error, and hides itself
// once the inputs it watches are valid again.
#include <vector>

#include <QLabel>

#include "session.hpp"

namespace hdlab::gui {

class StaleBanner : public QLabel {
  Q_OBJECT
 public:
  StaleBanner(Session* session, std::vector<Session::Input> inputs, QWidget* parent = nullptr);
  // A banner first in `view`'s box layout, over everything the view shows.
  static StaleBanner* attach(QWidget* view, Session* session, std::vector<Session::Input> inputs);

 private:
  void refresh();

  Session* session_;
  std::vector<Session::Input> inputs_;
};

}  // namespace hdlab::gui
