#include "ui/tuning/prediction_check_view.h"

#include "ui/common/format.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace bs::ui {

namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

QString number(double v, const std::string& unit)
{
    const int decimals = unit == "%" ? 1 : (std::abs(v) >= 100 ? 0 : 2);
    return QString::number(v, 'f', decimals) + QStringLiteral(" ") + toQt(unit);
}

} // namespace

PredictionCheckView::PredictionCheckView(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_table(new QTableWidget(0, 5, this))
    , m_stages(new QTableWidget(0, 5, this))
{
    m_summary->setWordWrap(true);
    m_table->setObjectName(QStringLiteral("predictionCheck"));
    m_table->setHorizontalHeaderLabels(
        {tr("run"), tr("figure"), tr("predicted"), tr("measured"), tr("error")});
    m_stages->setHorizontalHeaderLabels({tr("stage"), tr("F"), tr("B = I + W"), tr("W"), tr("U")});
    for (QTableWidget* t : {m_table, m_stages}) {
        t->verticalHeader()->setVisible(false);
        t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        t->horizontalHeader()->setStretchLastSection(true);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    }
    auto* tables = new QHBoxLayout;
    tables->addWidget(m_table, 3);
    tables->addWidget(m_stages, 2);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 2, 4, 2);
    column->addWidget(m_summary);
    column->addLayout(tables, 1);
    setChecks({});
    setCalibration(nullptr);
}

void PredictionCheckView::setChecks(const std::vector<PredictionCheck>& checks)
{
    m_table->setRowCount(0);
    for (const auto& check : checks) {
        for (const auto& f : check.figures) {
            const int row = m_table->rowCount();
            m_table->insertRow(row);
            m_table->setItem(row, 0, cell(toQt(check.run), Qt::AlignLeft | Qt::AlignVCenter));
            m_table->setItem(row, 1, cell(toQt(f.name), Qt::AlignLeft | Qt::AlignVCenter));
            m_table->setItem(row, 2, cell(number(f.predicted, f.unit)));
            m_table->setItem(row, 3, cell(number(f.measured, f.unit)));
            const double error = 100.0 * f.relativeError();
            auto* e = cell((error >= 0 ? QStringLiteral("+") : QString()) + QString::number(error, 'f', 1)
                + QStringLiteral(" %"));
            e->setData(Qt::UserRole, f.relativeError());
            if (std::abs(error) > 20) {
                e->setForeground(QColor(180, 40, 40));
            }
            m_table->setItem(row, 4, e);
        }
    }
    if (checks.empty()) {
        m_summary->setText(tr("No measured run yet: train live (Run ▸ Train live) or open a run directory to "
                              "compare the prediction with measured times."));
    } else {
        m_summary->setText(tr("Calibrated prediction of each measured run's own settings against what it "
                              "measured; the sliders and Suggest predict from the same times: %1.")
                               .arg(toQt(checks.front().calibratedFrom)));
    }
}

void PredictionCheckView::setCalibration(const CalibrationPtr& calibration)
{
    m_stages->setRowCount(0);
    if (!calibration) {
        m_stages->setToolTip(tr("Sliders predict from the device profile (no measured run)."));
        return;
    }
    const runtime::CostFit& fit = calibration->pooled;
    const int b = fit.microBatchSizes.empty() ? 1 : fit.microBatchSizes.front();
    m_stages->setToolTip(tr("Sliders, Suggest and this check predict from these times (shown at b = %1), %2.")
                             .arg(b)
                             .arg(toQt(calibration->source)));
    for (std::size_t s = 0; s < fit.stages.size(); ++s) {
        const int row = m_stages->rowCount();
        m_stages->insertRow(row);
        m_stages->setItem(row, 0, cell(QString::number(s)));
        const auto ms = [](std::int64_t ns) { return formatDuration(static_cast<double>(ns)); };
        const runtime::StageFit& f = fit.stages[s];
        m_stages->setItem(row, 1, cell(ms(f.forward.at(b))));
        m_stages->setItem(row, 2, cell(ms(f.backwardInput.at(b) + f.backwardWeight.at(b))));
        m_stages->setItem(row, 3, cell(ms(f.backwardWeight.at(b))));
        m_stages->setItem(row, 4, cell(ms(f.update)));
    }
}

QString PredictionCheckView::summaryText() const
{
    return m_summary->text();
}

} // namespace bs::ui
