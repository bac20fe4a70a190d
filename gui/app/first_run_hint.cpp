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
      tr("<b>Getting started.</b> hdlab predicts what a latent-computation design (HD streams, PHD, VWN, "
         "looped depth) costs on a Transformer backbone, shown next to the backbone alone. "
         "<b>1.</b> Pick a backbone and a design in the <i>Design</i> tab on the left; every view here "
         "follows each edit. <b>2.</b> Set the hardware, batch, context and parallelism in the "
         "<i>Hardware &amp; scenario</i> tab. <b>3.</b> Read the results in the tabs below: <i>Costs</i> "
         "(hover a metric for what it measures), <i>Masks</i>, <i>Layers</i>, <i>Trade-offs</i> and "
         "<i>Pipeline</i>."));
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
