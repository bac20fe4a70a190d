#include "first_run_hint.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>

namespace hdlab::gui {

FirstRunHint::FirstRunHint(QWidget* parent) : QFrame(parent) {
  setObjectName("firstRunHint");  // tests and screenshots find it by this name
  setFrameShape(QFrame::StyledPanel);
  // Blue, like information: nothing is wrong, this is where to start.
  setStyleSheet("#firstRunHint { background: #E8F1FB; border: 1px solid #7FA7D6; }");
  auto* h = new QHBoxLayout(this);
  text_ = new QLabel(
      // Three lines at most in a 1024 x 700 window: a longer hint pushes the window past it.
      tr("<b>Getting started:</b> <b>1.</b> pick a backbone and a design in <i>Design</i> (left); "
         "<b>2.</b> set the hardware, batch and context in <i>Hardware &amp; scenario</i>; <b>3.</b> read "
         "<i>Costs</i> and the tabs below, each against the backbone alone. Every view follows each edit."));
  text_->setWordWrap(true);
  text_->setTextFormat(Qt::RichText);
  h->addWidget(text_, 1);
  auto* ok = new QPushButton(tr("Got it"));
  ok->setToolTip(tr("Hide this hint; it will not show again"));
  connect(ok, &QPushButton::clicked, this, &FirstRunHint::dismiss);
  h->addWidget(ok, 0, Qt::AlignTop);
  // Shown with its parent unless dismissed (setVisible(true) here would open it as a window).
  if (QSettings().value(kDismissedKey, false).toBool()) hide();
}

QString FirstRunHint::text() const { return text_->text(); }

void FirstRunHint::dismiss() {
  QSettings().setValue(kDismissedKey, true);
  hide();
}

}  // namespace hdlab::gui
