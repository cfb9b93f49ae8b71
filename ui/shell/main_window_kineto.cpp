// MainWindow: opening a folder of torch.profiler (Kineto) rank traces of the user's own pipeline
// job (File > Open with a folder that holds *.json / *.json.gz traces and no config.toml).
// The import, the measured bubbles and the calibration are the engine's (profiler/import,
// runtime/plan/sim); this file only places the job in a compare slot like an opened run directory.
#include "profiler/analysis/analyze.h"
#include "profiler/import/job_import.h"
#include "profiler/import/measured_bubbles.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/tuner.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/shell/run_figures.h"
#include "ui/timeline/timeline_index.h"

#include <QDir>
#include <QFileInfo>
#include <QStatusBar>

namespace bs::ui {

bool MainWindow::isKinetoJobFolder(const QString& dir)
{
    const QDir folder(dir);
    return !folder.exists(QStringLiteral("config.toml"))
        && !folder.entryList({QStringLiteral("*.json"), QStringLiteral("*.json.gz")}, QDir::Files).isEmpty();
}

bool MainWindow::openKinetoJob(const QString& dir, QString* error)
{
    auto imported = profiler::kineto::importKinetoJob({fromQt(dir)});
    if (!imported) {
        if (error) {
            *error = toQt(imported.error().describe());
        }
        return false;
    }
    // Several profiled steps: each measured on its own; the slot shows the median step (as analyze).
    const profiler::kineto::ImportedJob* job = &profiler::kineto::medianStep(*imported);
    QString steps;
    for (const auto& step : imported->steps) {
        steps += (steps.isEmpty() ? tr(" · steps:") : QString())
            + tr(" #%1 %2 %")
                  .arg(step.profilerStep)
                  .arg(100.0 * profiler::kineto::measureBubbles(step).bubbleFraction, 0, 'f', 1);
    }
    if (!steps.isEmpty()) {
        steps += tr(" bubble; shown and calibrated: #%1 (median step time)").arg(job->profilerStep);
    }
    // The catalogue's schedule of the job's PyTorch class, on its placement (as analyze replays it).
    auto params = runtime::paramsForPyTorchSchedule(job->pytorchSchedule, static_cast<int>(job->ranks.size()),
        profiler::kineto::stagesPerRankOf(*job), std::max(1, job->microbatches));
    if (!params) {
        if (error) {
            *error = toQt(params.error().describe());
        }
        return false;
    }
    auto schedule = runtime::makeSchedule(*params);
    if (!schedule) {
        if (error) {
            *error = toQt(schedule.error().describe());
        }
        return false;
    }
    const profiler::AnalysisOptions options = profiler::kineto::analysisOptionsFor(*job);
    PredictedRun run = measuredRun(fromQt(QFileInfo(dir).fileName()) + " (" + job->pytorchSchedule + ", "
            + std::to_string(job->ranks.size()) + " ranks)",
        *schedule, job->trace, options);

    runtime::RunConfig config; // what selecting the job sets the tuning panel to
    config.schedule.name = params->name;
    config.pipeline.stages = params->stages;
    config.pipeline.stagesPerRank = params->stagesPerRank;
    config.pipeline.microbatches = params->microbatches;
    config.pipeline.microBatchSize = 1;
    config.training.steps = std::max(1, schedule->params.batches);
    // The time in receives split as measured: waiting for the sender to post vs moving data.
    TimeNs waiting = 0, moving = 0;
    for (const auto& rank : profiler::kineto::measureBubbles(*job).ranks) {
        waiting += rank.recvWaiting;
        moving += rank.recvTransfer;
    }
    const QString receives = tr(" · receives: %1 ms waiting for the sender, %2 ms transfer")
                                 .arg(static_cast<double>(waiting) / 1e6, 0, 'f', 1)
                                 .arg(static_cast<double>(moving) / 1e6, 0, 'f', 1);
    // A profiled step after warm-up steps: its first actions paid no start-up.
    const QString missing = job->warnings.empty() ? QString() : tr(" · not every rank's trace given (status bar)");
    const QString figures = figuresLine(run.result.report, -1.0) + receives + steps + missing;
    run.throughputKnown = false; // a trace does not say how many sequences a micro-batch held
    run.memoryKnown = false; // nor, as read here, the bytes a stage held
    // Another framework's model, not the built-in GPT: its own calibration scope, so opening it
    // never changes the predictions of the built-in model (issue 30).
    placeOpenedRun(run, config, tr("imported · ") + figures, 1, {}, runtime::FirstActions::Steady,
        "imported job " + fromQt(QFileInfo(dir).absoluteFilePath()));
    rememberFile(dir);
    QString warnings;
    for (const std::string& warning : job->warnings) {
        warnings += tr(" · warning: %1").arg(toQt(warning));
    }
    statusBar()->showMessage(tr("Imported %1 rank traces from %2").arg(job->ranks.size()).arg(dir) + warnings,
        warnings.isEmpty() ? 5000 : 0);
    statusBar()->setToolTip(warnings.isEmpty() ? QString() : warnings.mid(3)); // the whole sentence when cut
    return true;
}

} // namespace bs::ui
