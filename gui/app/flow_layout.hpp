#pragma once
// A row of controls that wraps onto more lines when the view is narrower than the row,
// like words in a paragraph: the views' control bars (pipeline, masks) use it so that a
// 1024-pixel-wide window shows every control without widening the window. Items keep
// their size hints; a line holds as many as fit its width.
#include <QLayout>
#include <QList>

namespace hdlab::gui {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr);
  ~FlowLayout() override;

  void addItem(QLayoutItem* item) override;
  int count() const override { return static_cast<int>(items_.size()); }
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;

  Qt::Orientations expandingDirections() const override { return {}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;  // the widest item (every item on its own line)
  QSize sizeHint() const override;     // every item on one line
  void setGeometry(const QRect& rect) override;

 private:
  // Places the items in `rect` (or only measures when `apply` is false); returns the
  // height used.
  int arrange(const QRect& rect, bool apply) const;

  QList<QLayoutItem*> items_;
};

}  // namespace hdlab::gui
