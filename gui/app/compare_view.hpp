#pragma once
// Compare mode: designs pinned as references (Comparison: the pins and their evaluation
// off the UI thread) and the Compare tab (CompareView: the pins with Remove, and the
// side-by-side table of every metric with the ratio pin / current). The main window
// overlays the pins' results on the trade-off charts and the pipeline Gantt.
#include <optional>
#include <vector>

#include <QAbstractTableModel>
#include <QWidget>

#include "background_job.hpp"
#include "hdlab/gui_core/compare.hpp"

class QLabel;
class QListWidget;
class QPushButton;
class QTableView;

namespace hdlab::gui {

// The pins, each evaluated once (its inputs are a copy and never change) by
// gui_core::evaluate_pin on the thread pool.
class Comparison : public QObject {
  Q_OBJECT
 public:
  explicit Comparison(QObject* parent = nullptr);
  ~Comparison() override;
  const gui_core::PinList& pins() const { return pins_; }
  // The pins evaluated so far, in pin order (those still running or failed are left out).
  std::vector<const gui_core::PinList::Entry*> evaluated() const;
  // Adds the pin and starts its evaluation; returns its id, or -1 with `error` set when
  // the list is full.
  int pin(gui_core::Pin pin, QString* error = nullptr);
  void remove(int id);
  void clear();
  bool evaluating() const { return job_.running(); }
  // Blocks until every pin is evaluated (tests).
  void waitForEvaluation();

 signals:
  // A pin came, went, or its result arrived.
  void changed();
  // A pin could not be evaluated (it is removed again).
  void failed(const QString& message);

 private:
  struct Outcome {
    int id = 0;
    std::optional<gui_core::PinResult> result;
    QString error;  // non-empty: the pin could not be evaluated
  };
  using Results = std::vector<Outcome>;
  void evaluatePending();

  gui_core::PinList pins_;
  BackgroundJob<Results> job_;
};

// Rows: every metric with its unit; columns: metric, unit, current, then for each pin its
// value and the ratio pin / current. Raw values under Qt::UserRole (NaN where missing).
class CompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  enum Column { Name, Unit, Current, FirstPin };
  static int valueColumn(int pin) { return FirstPin + 2 * pin; }
  static int ratioColumn(int pin) { return FirstPin + 2 * pin + 1; }

  // `pin_keys` head the columns ("pin 1"), `pin_labels` are their tooltips.
  void setRows(std::vector<gui_core::CompareRow> rows, QStringList pin_keys, QStringList pin_labels);
  const std::vector<gui_core::CompareRow>& rows() const { return rows_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<gui_core::CompareRow> rows_;
  QStringList keys_, labels_;
};

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(Comparison* comparison, QWidget* parent = nullptr);
  CompareModel* model() const { return model_; }
  QListWidget* pinList() const { return list_; }
  // The current design's results, as the other views show them.
  void setCurrent(const std::optional<simulator::Metrics>& metrics,
                  const std::optional<simulator::PipelineResult>& pipeline);
  const std::optional<simulator::Metrics>& current() const { return current_; }

 signals:
  // The Pin button: the main window pins what the session holds.
  void pinRequested();

 private:
  void refresh();

  Comparison* comparison_;
  QLabel* note_;
  QPushButton* pin_;
  QPushButton* remove_;
  QListWidget* list_;
  CompareModel* model_;
  QTableView* table_;
  std::optional<simulator::Metrics> current_;
  std::optional<simulator::PipelineResult> current_pipeline_;
};

}  // namespace hdlab::gui
