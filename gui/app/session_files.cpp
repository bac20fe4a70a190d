#include "session_files.hpp"

#include <set>

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QUndoCommand>
#include <QUndoStack>

#include "design_editor.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/session_io.hpp"
#include "main_window.hpp"
#include "mask_view.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

constexpr const char* kRecentKey = "sessions/recent";

// The parts an edit changes: the document without the view settings.
model::Json data_of(const model::Json& doc) {
  model::Json d = doc;
  if (d.is_object()) d.erase("gui");
  return d;
}

// The one JSON pointer an edit changed ("/scenario/decode/batch"), or "" when it changed
// several; `parts` gets the top-level parts it touched.
std::string changed_field(const model::Json& before, const model::Json& after, std::set<std::string>& parts) {
  std::set<std::string> paths;
  for (const model::Json& op : model::Json::diff(data_of(before), data_of(after))) {
    const std::string path = op["path"].get<std::string>();
    paths.insert(path);
    parts.insert(path.substr(1, path.find('/', 1) == std::string::npos ? std::string::npos : path.find('/', 1) - 1));
  }
  return paths.size() == 1 ? *paths.begin() : std::string();
}

// A bundled hardware profile's name, a file beside the session, or a file as given.
std::pair<simulator::HardwareProfile, QString> resolve_hardware(const std::string& name, const QString& folder,
                                                                const gui_core::Catalog& catalog) {
  QStringList candidates;
  if (!folder.isEmpty() && QFileInfo(QString::fromStdString(name)).isRelative())
    candidates << folder + "/" + QString::fromStdString(name);
  candidates << QString::fromStdString(name);
  for (const auto& e : catalog.hardware)
    if (QFileInfo(QString::fromStdString(e.path)).completeBaseName() == QString::fromStdString(name))
      candidates << QString::fromStdString(e.path);
  for (const QString& path : candidates) {
    if (!QFileInfo(path).isFile()) continue;
    return {simulator::parse_hardware_profile(model::read_json_file(path.toStdString())), path};
  }
  model::fail("/hardware", "no file \"" + name + "\" and no bundled profile of that name");
}

}  // namespace

// One recorded step: the documents before and after it. The edit is already applied when
// the step is pushed, so the first redo (QUndoStack::push calls it) does nothing.
class SessionEdit : public QUndoCommand {
 public:
  SessionEdit(SessionFiles* files, model::Json before, model::Json after, std::string field, const QString& text)
      : QUndoCommand(text),
        files_(files),
        before_(std::move(before)),
        after_(std::move(after)),
        field_(std::move(field)) {}
  int id() const override { return 1; }
  void undo() override { files_->undoRedo(before_); }
  void redo() override {
    if (pushed_)
      pushed_ = false;
    else
      files_->undoRedo(after_);
  }
  bool mergeWith(const QUndoCommand* other) override {
    const auto* o = static_cast<const SessionEdit*>(other);
    if (field_.empty() || o->field_ != field_) return false;
    after_ = o->after_;
    setObsolete(data_of(after_) == data_of(before_));  // back where it started: no step at all
    return true;
  }

 private:
  SessionFiles* files_;
  model::Json before_, after_;
  std::string field_;  // the one pointer it changed; "" for several (never merged)
  bool pushed_ = true;
};

SessionFiles::SessionFiles(MainWindow* window) : QObject(window), window_(window), undo_(new QUndoStack(this)) {
  undo_->setUndoLimit(200);  // whole documents: a few hundred kB each for the largest backbones
  pending_.setSingleShot(true);
  pending_.setInterval(0);
  connect(&pending_, &QTimer::timeout, this, &SessionFiles::flushEdits);
  Session* s = window_->session();
  for (auto signal : {&Session::configChanged, &Session::hardwareChanged, &Session::scenarioChanged})
    connect(s, signal, this, &SessionFiles::noteEdit);
  connect(window_->pipelineView(), &PipelineView::settingsEdited, this, &SessionFiles::noteEdit);
}

void SessionFiles::noteEdit() {
  if (!restoring_) pending_.start();
}

void SessionFiles::flushEdits() {
  pending_.stop();
  if (restoring_) return;
  const model::Json now = document();
  if (now.is_null()) return;
  if (current_.is_null()) {  // the first model loaded: where history starts
    current_ = now;
    return;
  }
  if (data_of(now) == data_of(current_)) return;
  std::set<std::string> parts;
  const std::string field = changed_field(current_, now, parts);
  QStringList names;
  for (const auto& p : parts) names << QString::fromStdString(p);
  const QString text =
      field.empty() ? tr("edit %1").arg(names.join(", ")) : tr("edit %1").arg(QString::fromStdString(field.substr(1)));
  undo_->push(new SessionEdit(this, current_, now, field, text));
  current_ = now;
}

gui_core::ViewSettings SessionFiles::viewSettings() const {
  gui_core::ViewSettings v;
  const QString tab = window_->tabs()->tabText(window_->tabs()->currentIndex()).remove('&').toLower();
  for (const auto& name : gui_core::view_tabs())
    if (tab == QString::fromStdString(name)) v.tab = name;
  v.layer = window_->session()->selectedLayer();
  v.mask = window_->maskView()->settings();
  v.model_preset = window_->designEditor()->modelPreset().toStdString();
  v.design_preset = window_->designEditor()->designPreset().toStdString();
  v.hardware_preset = window_->scenarioEditor()->hardwarePreset().toStdString();
  return v;
}

model::Json SessionFiles::document() const {
  const Session* s = window_->session();
  if (!s->hasConfig()) return nullptr;
  simulator::SessionDocument d;
  d.config = s->config();
  if (s->hasHardware()) d.hardware = s->hardware();
  d.scenario = simulator::to_json(s->scenario());
  d.pipeline = window_->pipelineView()->optionsJson();
  d.gui = gui_core::to_json(viewSettings());
  return simulator::to_json(d);
}

void SessionFiles::restore(const model::Json& doc, const QString& folder, bool views) {
  Session* session = window_->session();
  // Everything is parsed and checked before anything changes.
  const simulator::SessionDocument s = simulator::parse_session(doc);
  const gui_core::ViewSettings v = s.gui.is_null() ? viewSettings() : gui_core::parse_view_settings(s.gui);
  std::optional<simulator::HardwareProfile> hw = s.hardware;
  QString hw_preset = QString::fromStdString(v.hardware_preset);
  if (!s.hardware_name.empty()) std::tie(hw, hw_preset) = resolve_hardware(s.hardware_name, folder, session->catalog());
  const simulator::Scenario scenario =
      s.scenario.is_null() ? session->scenario() : simulator::parse_scenario(s.scenario);
  if (hw || session->hasHardware())
    simulator::check_scenario(s.config, hw ? *hw : session->hardware(), scenario, "/scenario");
  if (!s.pipeline.is_null()) PipelineView::checkOptions(s.pipeline);

  restoring_ = true;
  window_->designEditor()->restore(s.config, QString::fromStdString(v.model_preset),
                                   QString::fromStdString(v.design_preset));
  // A value a field shows rounded (a spin box's decimals) still comes back exactly.
  if (!(session->config() == s.config)) session->setConfig(s.config, QString::fromStdString(s.config.base.name));
  window_->scenarioEditor()->restore(hw ? &*hw : nullptr, scenario, hw_preset);
  if (!s.pipeline.is_null()) window_->pipelineView()->restoreOptions(s.pipeline);
  if (views) {
    window_->maskView()->setSettings(v.mask);
    session->setSelectedLayer(static_cast<int>(v.layer));
    for (int i = 0; i < window_->tabs()->count(); ++i)
      if (window_->tabs()->tabText(i).remove('&').toLower() == QString::fromStdString(v.tab))
        window_->tabs()->setCurrentIndex(i);
  }
  restoring_ = false;
  pending_.stop();
  current_ = document();
}

void SessionFiles::undoRedo(const model::Json& doc) {
  try {
    restore(doc, {}, false);
  } catch (const model::ConfigError& e) {  // a recorded document always parses; say so if not
    restoring_ = false;
    emit message(tr("Could not restore: %1").arg(QString::fromStdString(e.what())));
  }
}

QString SessionFiles::save(const QString& path) {
  flushEdits();
  model::Json doc = document();
  if (doc.is_null()) {
    const QString msg = tr("No model loaded: nothing to save");
    emit message(msg);
    return msg;
  }
  const Session* s = window_->session();
  doc["description"] = "hdlab session: " + s->backboneLabel().toStdString() + " + " +
                       model::describe(s->config().design) +
                       (s->hasHardware() ? " on " + s->hardwareLabel().toStdString() : std::string()) +
                       " (hdlab-gui; `hdlab cost FILE` and `hdlab pipeline FILE` read it)";
  try {
    model::write_file_atomic(path.toStdString(), doc.dump(2) + "\n");
  } catch (const model::ConfigError& e) {
    const QString msg = tr("Could not save the session: %1").arg(QString::fromStdString(e.what()));
    emit message(msg);
    return msg;
  }
  remember(path);
  emit message(tr("Saved session %1").arg(path));
  return {};
}

QString SessionFiles::open(const QString& path) {
  flushEdits();
  const model::Json before = current_;
  try {
    restore(model::read_json_file(path.toStdString()), QFileInfo(path).absolutePath(), true);
  } catch (const model::ConfigError& e) {
    restoring_ = false;
    const QString msg = tr("Cannot open session %1: %2 (nothing changed)").arg(path, QString::fromStdString(e.what()));
    emit message(msg);
    return msg;
  }
  // Opening is one step back to what was loaded before.
  if (!before.is_null() && data_of(before) != data_of(current_))
    undo_->push(new SessionEdit(this, before, current_, {}, tr("open session %1").arg(QFileInfo(path).fileName())));
  remember(path);
  emit message(tr("Opened session %1").arg(path));
  return {};
}

QString SessionFiles::openRecent(const QString& path) {
  if (!QFileInfo(path).isFile()) {
    QStringList files = recent();
    files.removeAll(path);
    setRecent(files);
    const QString msg = tr("%1 is no longer there; removed from Recent sessions").arg(path);
    emit message(msg);
    return msg;
  }
  return open(path);
}

QStringList SessionFiles::recent() const {
  const auto settings = settings_file_.isEmpty() ? std::make_unique<QSettings>()
                                                 : std::make_unique<QSettings>(settings_file_, QSettings::IniFormat);
  return settings->value(kRecentKey).toStringList();
}

void SessionFiles::setRecent(const QStringList& files) {
  const auto settings = settings_file_.isEmpty() ? std::make_unique<QSettings>()
                                                 : std::make_unique<QSettings>(settings_file_, QSettings::IniFormat);
  settings->setValue(kRecentKey, files);
}

void SessionFiles::remember(const QString& path) {
  const QString file = QFileInfo(path).absoluteFilePath();
  QStringList files = recent();
  files.removeAll(file);
  files.prepend(file);
  while (files.size() > max_recent) files.removeLast();
  setRecent(files);
}

void SessionFiles::clearRecent() { setRecent({}); }

// From the menus, a failure also gets a dialog: the status bar may cut a long pointer.
void SessionFiles::openDialog() {
  const QString path =
      QFileDialog::getOpenFileName(window_, tr("Open session"), {}, tr("Session JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  if (const QString error = open(path); !error.isEmpty()) QMessageBox::warning(window_, tr("Open session"), error);
}

void SessionFiles::saveDialog() {
  const QString path =
      QFileDialog::getSaveFileName(window_, tr("Save session"), "session.json", tr("Session JSON (*.json)"));
  if (path.isEmpty()) return;
  if (const QString error = save(path); !error.isEmpty()) QMessageBox::warning(window_, tr("Save session"), error);
}

void SessionFiles::fillRecentMenu(QMenu* menu) {
  connect(menu, &QMenu::aboutToShow, this, [this, menu] {
    menu->clear();
    const QStringList files = recent();
    for (int i = 0; i < files.size(); ++i) {
      QAction* a = menu->addAction(QString("&%1 %2").arg(i + 1).arg(QFileInfo(files[i]).fileName()));
      a->setStatusTip(files[i]);
      a->setToolTip(files[i]);
      connect(a, &QAction::triggered, this, [this, file = files[i]] {
        if (const QString error = openRecent(file); !error.isEmpty())
          QMessageBox::warning(window_, tr("Recent sessions"), error);
      });
    }
    if (files.isEmpty()) menu->addAction(tr("(none)"))->setEnabled(false);
    menu->addSeparator();
    menu->addAction(tr("Clear list"), this, &SessionFiles::clearRecent)->setEnabled(!files.isEmpty());
  });
}

}  // namespace hdlab::gui
