// TuningPanel's honesty checks: the one pre-flight of what the runtime would refuse, shown beside
// the control whose field it names, and the warning where the numbers are when the calibration's
// fit error on its own runs is too large to trust.
#include "ui/common/format.h"
#include "ui/tuning/tuning_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>

namespace bs::ui {

Status TuningPanel::preflight(const WhatIfConfig& config) const
{
    return runtime::preflightStart(toRunConfig(config), m_capacity);
}

void TuningPanel::buildRefusalRows(QFormLayout* form)
{
    // One note under each control a refused field can belong to, bottom row first so the rows
    // above keep their indices. The first control is where any other field's reason goes.
    QWidget* const controls[] = {m_schedule, m_stages, m_stagesPerRank->parentWidget(), m_model, m_runDevice,
        m_accum->parentWidget(), m_microBatch->parentWidget()};
    std::vector<std::pair<int, QWidget*>> rows;
    for (QWidget* control : controls) {
        int row = -1;
        QFormLayout::ItemRole role{};
        form->getWidgetPosition(control, &row, &role);
        rows.emplace_back(row, control);
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [row, control] : rows) {
        auto* note = new QLabel(form->parentWidget());
        note->setObjectName(QStringLiteral("refusalNote"));
        note->setWordWrap(true);
        note->setStyleSheet(QStringLiteral("color: #b91c1c;"));
        note->hide();
        form->insertRow(row + 1, note); // the form's whole width: a reason reads in few lines
        m_refusalRows.emplace_back(control, note);
    }
    std::reverse(m_refusalRows.begin(), m_refusalRows.end()); // the schedule's note first
}

namespace {

/// The control (index into the refusal rows: schedule, p, v, model, run on, a, b) a field names.
int controlOfField(const std::string& field)
{
    const auto starts = [&field](const char* prefix) { return field.rfind(prefix, 0) == 0; };
    if (starts("pipeline.stages_per_rank") || starts("pipeline.placement")) {
        return 2;
    }
    if (starts("pipeline.microbatches") || starts("pipeline.accum")) {
        return 5;
    }
    if (starts("pipeline.micro_batch_size") || starts("pre-flight")) { // memory: b is what frees it
        return 6;
    }
    if (starts("pipeline.stages") || starts("pipeline.layers_per_stage") || starts("pipeline.partition")) {
        return 1;
    }
    if (starts("model.")) {
        return 3;
    }
    if (starts("device.")) {
        return 4;
    }
    return 0;
}

} // namespace

void TuningPanel::updateRefusal()
{
    const Status start = preflight(config());
    m_refusal = start ? std::nullopt : std::optional<Error>(start.error());
    const int at = m_refusal ? controlOfField(m_refusal->context) : -1;
    for (int i = 0; i < static_cast<int>(m_refusalRows.size()); ++i) {
        QLabel* note = m_refusalRows[static_cast<std::size_t>(i)].second;
        if (i == at) {
            note->setText(tr("The runtime would refuse this: %1").arg(toQt(m_refusal->message)));
            // The form does not grow a wrapped label's row to its text in the scrolling dock: ask
            // for the height the whole reason needs at the width the row has.
            const int width = std::max(160, note->parentWidget()->contentsRect().width() - 24);
            note->setMinimumHeight(
                note->fontMetrics().boundingRect(QRect(0, 0, width, 10'000), Qt::TextWordWrap, note->text()).height());
        }
        note->setVisible(i == at);
    }
}

QLabel* TuningPanel::refusalLabel() const
{
    for (const auto& [control, note] : m_refusalRows) {
        if (!note->isHidden()) {
            return note;
        }
    }
    return nullptr;
}

QWidget* TuningPanel::refusedControl() const
{
    for (const auto& [control, note] : m_refusalRows) {
        if (!note->isHidden()) {
            return control;
        }
    }
    return nullptr;
}

QWidget* TuningPanel::makeFitWarning(QWidget* parent)
{
    auto* row = new QWidget(parent);
    row->setObjectName(QStringLiteral("fitWarning"));
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto* text = new QLabel(row);
    text->setObjectName(QStringLiteral("fitWarningText"));
    text->setWordWrap(true);
    text->setStyleSheet(QStringLiteral("color: #92400e; background: #fef3c7; padding: 2px;"));
    h->addWidget(text, 1);
    auto* calibrate = new QPushButton(tr("Calibrate"), row);
    calibrate->setObjectName(QStringLiteral("fitWarningCalibrate"));
    calibrate->setToolTip(tr("Run ▸ Calibrate: train the panel's settings briefly at b and 2b and refit"));
    h->addWidget(calibrate, 0, Qt::AlignTop);
    connect(calibrate, &QPushButton::clicked, this, &TuningPanel::calibrateRequested);
    row->hide();
    return row;
}

void TuningPanel::updateFitWarnings()
{
    const std::string schedule = fromQt(m_schedule->currentData().toString());
    const double error = m_calibration ? m_calibration->fitFor(schedule).maxRelativeError : 0.0;
    const bool warn = error > kHonestFitError;
    for (QWidget* row : {m_fitWarning, m_suggestFitWarning}) {
        if (row == nullptr) { // setCalibration() while the panel is built
            continue;
        }
        if (auto* text = row->findChild<QLabel*>(QStringLiteral("fitWarningText"))) {
            text->setText(tr("⚠ The calibration misses its own runs by up to %1 % (over %2 %): these predictions "
                             "may be that far off.")
                              .arg(error * 100, 0, 'f', 0)
                              .arg(kHonestFitError * 100, 0, 'f', 0));
        }
        row->setVisible(warn);
    }
}

} // namespace bs::ui
