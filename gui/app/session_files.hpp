#pragma once
// Sessions: the whole study (backbone, design, hardware, scenario, pipeline options and
// the view settings) as one session document (simulator/session_io.hpp), which the CLI
// also reads (`hdlab cost SESSION.json`); saved atomically, opened again, listed under
// File > Recent sessions; and the edits between them undone and redone.
//
// Undo works on whole documents. Every edit (a design field, the backbone, the hardware,
// a scenario field, a pipeline control) is recorded once the event loop is back, so that
// one user action that changes several parts is one step, as the document before and
// after it. Undo and redo put a document back through the editors, so that every field
// and view follows; consecutive edits of one field (a spin box's arrow held) merge into
// one step. The view settings (tab, layer, mask picture) are saved and opened with a
// session, but moving between views is not an edit: undo leaves the views where they are.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "hdlab/gui_core/view_settings.hpp"
#include "hdlab/model/config_io.hpp"

class QMenu;
class QUndoStack;

namespace hdlab::gui {

class MainWindow;

class SessionFiles : public QObject {
  Q_OBJECT
 public:
  // The most files File > Recent sessions lists.
  static constexpr int max_recent = 8;

  explicit SessionFiles(MainWindow* window);

  QUndoStack* undoStack() const { return undo_; }
  // The session as a document; null while no model is loaded.
  model::Json document() const;
  gui_core::ViewSettings viewSettings() const;
  // Puts a session document back; parts it leaves out keep what is loaded. Everything is
  // checked first: a ConfigError at its JSON pointer, and nothing changed. `folder`: where
  // a "hardware" file named relative to the session is looked for. `views`: also the tab,
  // the layer and the mask picture (opening a file does; undo does not).
  void restore(const model::Json& doc, const QString& folder = {}, bool views = true);

  // Write / read a session file; "" on success, else the message shown (naming the file,
  // and for a bad document the JSON pointer). A file opened or saved goes first in Recent.
  QString save(const QString& path);
  QString open(const QString& path);
  // Opens a Recent entry; one whose file is gone leaves the list, with a message.
  QString openRecent(const QString& path);
  QStringList recent() const;
  void clearRecent();
  // Where the Recent list is kept: the application's QSettings unless a file is given (tests).
  void setSettingsFile(const QString& path) { settings_file_ = path; }

  // Records the edits not yet recorded (the event loop does it otherwise).
  void flushEdits();

  void openDialog();
  void saveDialog();
  // Rebuilt each time it opens: the Recent files, then Clear.
  void fillRecentMenu(QMenu* menu);

 signals:
  void message(const QString& text);

 private:
  friend class SessionEdit;
  void noteEdit();
  void undoRedo(const model::Json& doc);
  void remember(const QString& path);
  void setRecent(const QStringList& files);

  MainWindow* window_;
  QUndoStack* undo_;
  QTimer pending_;       // zero-time: records an action's edits once it is done
  model::Json current_;  // the document as last recorded
  bool restoring_ = false;
  QString settings_file_;
};

}  // namespace hdlab::gui
