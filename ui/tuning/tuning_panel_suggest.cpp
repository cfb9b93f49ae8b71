// TuningPanel's Suggest: the search (runtime::tune) over a and b at the panel's settings, its
// table, and one-click apply of a row.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/limits.h"
#include "ui/common/format.h"
#include "ui/tuning/tuning_panel.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <utility>

namespace bs::ui {

int fewestAcceptedFrom(const runtime::ScheduleInfo& info, int p, int m)
{
    while (m < runtime::limits::kMaxMicrobatches && !info.acceptsMicrobatches(p, m, 0)) {
        ++m;
    }
    return m;
}

QWidget* TuningPanel::buildSuggest()
{
    auto* box = new QGroupBox(tr("Suggest (a, b)"), this);
    auto* v = new QVBoxLayout(box);
    auto* row = new QHBoxLayout();
    row->addWidget(new QLabel(tr("max drift"), box));
    m_maxLag = new QSpinBox(box);
    m_maxLag->setObjectName(QStringLiteral("maxLagSpin"));
    m_maxLag->setRange(0, 16);
    m_maxLag->setValue(1);
    m_maxLag->setSuffix(tr(" update(s)"));
    row->addWidget(m_maxLag, 1);
    m_suggestButton = new QPushButton(tr("Suggest"), box);
    row->addWidget(m_suggestButton);
    v->addLayout(row);
    m_suggestFitWarning = makeFitWarning(box);
    v->addWidget(m_suggestFitWarning);
    m_suggestions = new QTableWidget(0, 5, box);
    m_suggestions->setHorizontalHeaderLabels({tr("a"), tr("b"), tr("seq/s"), tr("bubble"), tr("memory")});
    m_suggestions->verticalHeader()->hide();
    m_suggestions->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_suggestions->setWordWrap(false);
    m_suggestions->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_suggestions->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_suggestions->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_suggestions->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_suggestions->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_suggestions->setToolTip(tr("Double-click a row to apply it"));
    v->addWidget(m_suggestions, 1);
    m_suggestStatus = new QLabel(box);
    m_suggestStatus->setWordWrap(true);
    m_suggestStatus->setStyleSheet(QStringLiteral("color: #6b7280;"));
    v->addWidget(m_suggestStatus);
    connect(m_suggestButton, &QPushButton::clicked, this, &TuningPanel::suggest);
    connect(m_suggestions, &QTableWidget::cellDoubleClicked, this, [this](int r, int) { applySuggestion(r); });
    return box;
}

bool TuningPanel::isSearching() const
{
    return m_search->isRunning();
}

void TuningPanel::suggest()
{
    if (m_search->isRunning()) {
        return;
    }
    m_suggested = true;
    m_suggestAgain = false;
    const WhatIfConfig c = config();
    auto scenario = scenarioFor(c, c.schedule());
    if (!scenario) {
        m_suggestStatus->setText(toQt(scenario.error().describe()));
        return;
    }
    runtime::TuneRequest request;
    request.base = *scenario;
    if (const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule()); info && !info->takesAccumWindow()) {
        // a = m: search the m its rules take nearest above each usual a (interleaved at p = 3:
        // 3, 6, 9, 18, 33), so every row listed is a setting this schedule runs.
        std::vector<int> accepted;
        for (int usual : request.accumValues) {
            const int a = fewestAcceptedFrom(*info, scenario->stages, usual);
            if (std::find(accepted.begin(), accepted.end(), a) == accepted.end()) {
                accepted.push_back(a);
            }
        }
        request.accumValues = std::move(accepted);
    }
    request.maxLag = m_maxLag->value();
    request.steadyState = false; // the what-if's figures (its batches), so a picked row predicts what it listed
    request.memoryBudgetBytes = c.memoryBudgetBytes;
    if (c.calibration) { // rank by what this machine measured, exactly as the slider predictions do
        request.calibration = c.calibration->fitFor(c.schedule());
    }
    m_suggestSource = sourceText();
    if (const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule()); info && info->multiStage()) {
        // Suggest searches a and b at the panel's v (and the schedule's placement).
        m_suggestSource += tr("; at v = %1, %2 placement").arg(m_stagesPerRank->value()).arg(m_placement->text());
    }
    m_suggestButton->setEnabled(false);
    m_suggestStatus->setText(tr("searching…"));
    m_search->setFuture(QtConcurrent::run([request] { return runtime::tune(request); }));
}

void TuningPanel::suggestionsFinished()
{
    m_suggestButton->setEnabled(true);
    const auto result = m_search->result();
    m_suggestions->setRowCount(0);
    if (!result) {
        m_suggestStatus->setText(toQt(result.error().describe()));
        Q_EMIT suggestionsReady();
        return;
    }
    // Only rows a run would start with: the same pre-flight as the what-if and Train live.
    std::vector<runtime::TuneCandidate> top;
    int refusedByRuntime = 0;
    QString firstRefusal;
    for (const auto& candidate : result->top) {
        if (Status start = preflight(suggestionConfig(candidate.accum, candidate.microBatchSize)); !start) {
            ++refusedByRuntime;
            if (firstRefusal.isEmpty()) {
                firstRefusal = toQt(start.error().message);
            }
            continue;
        }
        top.push_back(candidate);
    }
    m_suggestions->setRowCount(static_cast<int>(top.size()));
    for (int i = 0; i < static_cast<int>(top.size()); ++i) {
        const auto& c = top[static_cast<std::size_t>(i)];
        const QStringList cells{QString::number(c.accum), QString::number(c.microBatchSize),
            QString::number(c.throughputSamplesPerSecond, 'f', 0), formatPercent(c.bubbleFraction),
            formatBytes(static_cast<double>(c.peakMemoryBytes))};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (col == 2) {
                item->setData(Qt::UserRole, c.throughputSamplesPerSecond); // the predicted figure, unrounded
                item->setToolTip(tr("Predicted from %1").arg(m_suggestSource));
            }
            m_suggestions->setItem(i, col, item);
        }
    }
    const QString refused = result->rejectedByBatch > 0
        ? tr(", %1 by the schedule (its rules on m)").arg(result->rejectedByBatch)
        : QString();
    const QString runtimeRefused = refusedByRuntime > 0
        ? tr(", %1 that the runtime would refuse (%2)").arg(refusedByRuntime).arg(firstRefusal)
        : QString();
    m_suggestStatus->setText(
        tr("%1 simulated (predicted seq/s, times: %4); rejected: %2 by drift, %3 by memory%5%6. Double-click to apply.")
            .arg(result->evaluated)
            .arg(result->rejectedByLag)
            .arg(result->rejectedByMemory)
            .arg(m_suggestSource, refused, runtimeRefused));
    Q_EMIT suggestionsReady();
    if (std::exchange(m_suggestAgain, false)) {
        suggest(); // recalibrated while searching: the table shows the new times
    }
}

WhatIfConfig TuningPanel::suggestionConfig(int accum, int microBatchSize) const
{
    WhatIfConfig c = config();
    c.run.pipeline.microbatches = accum; // the tuner's a = m
    c.run.pipeline.accum = 0;
    c.run.pipeline.microBatchSize = microBatchSize;
    return c;
}

void TuningPanel::applySuggestion(int row)
{
    if (row < 0 || row >= m_suggestions->rowCount()) {
        return;
    }
    setConfig(
        suggestionConfig(m_suggestions->item(row, 0)->text().toInt(), m_suggestions->item(row, 1)->text().toInt()));
    Q_EMIT configChanged(config());
}

} // namespace bs::ui
