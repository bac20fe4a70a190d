#include "stale_banner.hpp"

#include <QBoxLayout>

namespace hdlab::gui {

StaleBanner::StaleBanner(Session* session, std::vector<Session::Input> inputs, QWidget* parent)
    : QLabel(parent), session_(session), inputs_(std::move(inputs)) {
  setObjectName("staleBanner");  // tests and screenshots find it by this name
  setWordWrap(true);
  setTextFormat(Qt::PlainText);
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Amber, like a warning: the numbers below are real but not for the input as typed.
  setStyleSheet("QLabel { background: #FFF1C2; color: #5C4400; border: 1px solid #D9A400; padding: 4px; }");
  connect(session_, &Session::inputErrorsChanged, this, &StaleBanner::refresh);
  refresh();
}

StaleBanner* StaleBanner::attach(QWidget* view, Session* session, std::vector<Session::Input> inputs) {
  auto* banner = new StaleBanner(session, std::move(inputs), view);
  if (auto* box = qobject_cast<QBoxLayout*>(view->layout())) box->insertWidget(0, banner);
  return banner;
}

void StaleBanner::refresh() {
  QStringList lines;
  for (Session::Input input : inputs_) {
    const QString note = session_->staleNote({input});
    if (!note.isEmpty()) lines << note;
  }
  setText(lines.join('\n'));
  setVisible(!lines.isEmpty());
}

}  // namespace hdlab::gui
