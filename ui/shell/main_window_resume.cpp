// Run ▸ Resume run directory…: continues a run from its checkpoint (train --resume in the GUI;
// runtime/plan/rundir/checkpoint_state.h). The run starts in the top slot as a live run with the
// checkpoint's settings; its metrics and trace continue in the same directory. A minimal hook
// (issue 16 item 4): the checkpoint's steps before the resume are not redrawn in the live charts.
#include "runtime/plan/rundir/checkpoint_state.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#ifdef BS_HAVE_RUN_SESSION
#include "ui/bridge/run_session_backend.h"
#endif
#include "ui/bridge/run_controller.h"
#include "ui/tuning/tuning_panel.h"

#include <QAction>
#include <QFileDialog>
#include <QMessageBox>
#include <QStatusBar>

#include <filesystem>

namespace bs::ui {

bool MainWindow::resumeRunDirectory(const QString& dir, QString* error)
{
#ifdef BS_HAVE_RUN_SESSION
    auto state = runtime::readCheckpointState(std::filesystem::path(fromQt(dir)) / runtime::kCheckpointDirName);
    if (!state) {
        *error = toQt(state.error().describe());
        return false;
    }
    WhatIfConfig config = fromRunConfig(state->config);
    config.batches = state->config.training.steps;
    config.calibration = m_tuning->calibration();
    auto plan = predictRun(config, state->config.schedule.name);
    if (!plan) {
        *error = toQt(plan.error().describe());
        return false;
    }
    if (m_workspace->showsRuns() && m_workspace->freeSlots() == 0) { // never in another run's place
        *error = tr("All %1 run slots hold runs: remove one (Run ▸ Remove run) to resume %2")
                     .arg(RunWorkspace::kSlots)
                     .arg(dir);
        return false;
    }
    m_runs->stop();
    dropQueuedRuns();
    m_tuning->setConfig(config);
    enterRunMode();
    m_stopping = false;
    m_liveBudget = config.memoryBudgetBytes;
    const int slot = m_workspace->reserve();
    m_batchSlots = {slot};
    m_selectNextStart = true;
    m_queuedPlans.push_back(QueuedRun{*plan, state->config, slot});
    runtime::SessionOptions options;
    options.outDir = std::filesystem::path(fromQt(dir));
    options.resume = true;
    const std::string label = plan->label + " (resumed at step " + std::to_string(state->step) + ")";
    m_runs->enqueue(std::make_unique<RunSessionBackend>(label, state->config, options));
    m_liveMeasured = liveTrainingAvailable();
    m_compare->setSlot(slot, tr("waiting"), QString(), nullptr);
    m_stopAction->setEnabled(true);
    statusBar()->showMessage(tr("Resuming %1 from step %2…").arg(dir).arg(state->step), 8000);
    return true;
#else
    (void)dir;
    *error = tr("This build has no live training (LibTorch was not found at build time).");
    return false;
#endif
}

void MainWindow::resumeRunDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Resume run directory"));
    QString error;
    if (!dir.isEmpty() && !resumeRunDirectory(dir, &error)) {
        QMessageBox::warning(this, tr("Cannot resume run"), error);
    }
}

} // namespace bs::ui
