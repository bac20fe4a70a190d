// hdlab-gui: the desktop app. main() is the one place that reads the command line, the
// environment and paths: it finds the profiles folder and opens the defaults.
#include <filesystem>
#include <iostream>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTabWidget>
#include <QTimer>

#include "design_editor.hpp"
#include "hdlab/gui_core/catalog.hpp"
#include "main_window.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session_files.hpp"

namespace fs = std::filesystem;

namespace {

// Where profiles/ may be: given, in the environment, next to or above the executable
// (build trees, installs), or under the working directory.
std::vector<fs::path> profile_candidates(const QString& given) {
  std::vector<fs::path> c;
  if (!given.isEmpty()) c.emplace_back(given.toStdString());
  if (const char* env = std::getenv("HDLAB_PROFILES")) c.emplace_back(env);
  const fs::path exe = QCoreApplication::applicationDirPath().toStdString();
  for (const fs::path& up : {fs::path("."), fs::path(".."), fs::path("../.."), fs::path("../../..")}) {
    c.push_back(exe / up / "profiles");
    c.push_back(exe / up / "share/hdlab/profiles");
  }
  c.push_back(fs::current_path() / "profiles");
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("hdlab-gui");
  QApplication::setOrganizationName("hdlab");
  QCommandLineParser cli;
  cli.setApplicationDescription("hdlab: what a latent-computation design costs, before it runs");
  cli.addHelpOption();
  cli.addOptions({{"profiles", "Profiles folder (models/, hardware/, designs/).", "dir"},
                  {"model", "Model file to open instead of Qwen3-8B.", "file"},
                  {"design", "Design file to apply instead of HD n=4.", "file"},
                  {"hardware", "Hardware profile instead of the H100.", "file"},
                  // Not "--session": QApplication takes that one (X11 session management).
                  {"open-session", "Session file to open (File > Save session writes one).", "file"},
                  {"tab", "Tab to show first (costs, masks, layers, trade-offs, pipeline, validation).", "name"},
                  {"screenshot", "Save the window as PNG once results are in, then exit.", "file"}});
  cli.process(app);

  const auto root = hdlab::gui_core::find_profiles_dir(profile_candidates(cli.value("profiles")));
  hdlab::gui_core::Catalog catalog = root ? hdlab::gui_core::read_catalog(*root) : hdlab::gui_core::Catalog{};
  hdlab::gui::MainWindow window(catalog);
  QStringList missing;
  if (root) missing = window.applyDefaults();
  else missing << "the profiles folder (use --profiles or HDLAB_PROFILES)";
  if (cli.isSet("model")) window.designEditor()->loadModelFile(cli.value("model"));
  if (cli.isSet("design")) window.designEditor()->loadDesignFile(cli.value("design"));
  if (cli.isSet("hardware")) window.scenarioEditor()->loadHardwareFile(cli.value("hardware"));
  if (cli.isSet("open-session")) {
    window.sessionFiles()->flushEdits();  // the defaults are where history starts
    if (const QString error = window.sessionFiles()->open(cli.value("open-session")); !error.isEmpty())
      std::cerr << "hdlab-gui: " << error.toStdString() << "\n";
  }
  if (!missing.isEmpty()) {
    std::cerr << "hdlab-gui: not found: " << missing.join(", ").toStdString() << "\n";
    window.showMessage("Not found: " + missing.join(", "));
  }
  if (cli.isSet("tab")) {
    for (int i = 0; i < window.tabs()->count(); ++i)
      if (window.tabs()->tabText(i).remove('&').compare(cli.value("tab"), Qt::CaseInsensitive) == 0)
        window.tabs()->setCurrentIndex(i);
  }
  window.show();
  if (cli.isSet("screenshot")) {
    const QString path = cli.value("screenshot");
    window.waitForEvaluation();
    window.pipelineView()->waitForRun();
    if (!window.grab().save(path, "PNG")) {
      std::cerr << "hdlab-gui: could not write " << path.toStdString() << "\n";
      return 1;
    }
    return 0;
  }
  return QApplication::exec();
}
