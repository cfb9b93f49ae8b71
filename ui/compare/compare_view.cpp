#include "ui/compare/compare_view.h"

#include "ui/common/palette.h"
#include "ui/timeline/timeline_legend.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"

#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace bs::ui {

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_zoom(new TimelineZoom(this))
    , m_model(new ComparisonModel(this))
    , m_table(new QTableView(this))
    , m_stageModel(new StageStatsModel(this))
    , m_stageTable(new QTableView(this))
{
    auto* lanes = new QVBoxLayout(this);
    lanes->setContentsMargins(0, 0, 0, 0);
    lanes->setSpacing(2);
    auto* legend = new TimelineLegend(this);
    lanes->addWidget(legend);
    for (int i = 0; i < kSlots; ++i) {
        Slot slot;
        slot.title = new QLabel(this);
        slot.title->setTextFormat(Qt::RichText);
        slot.title->setContentsMargins(4, 6, 0, 0);
        slot.view = new TimelineView(this);
        slot.view->setZoom(m_zoom);
        slot.view->setShowRuler(true);
        lanes->addWidget(slot.title);
        lanes->addWidget(slot.view, 1);
        m_slots.push_back(slot);
    }

    m_table->setModel(m_model);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setAlternatingRowColors(true);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto* tabs = new QTabWidget(this);
    m_tablePanel = tabs;
    auto* comparison = new QWidget(tabs);
    auto* side = new QVBoxLayout(comparison);
    side->setContentsMargins(2, 2, 2, 2);
    side->addWidget(m_table);
    auto* note = new QLabel(tr("Difference: first run vs second (× for ratios, pp for percentage points). "
                               "Green: first run is better."),
        this);
    note->setWordWrap(true);
    note->setStyleSheet(QStringLiteral("color: #6b7280; font-size: 8pt;"));
    side->addWidget(note);
    side->addStretch(1);
    tabs->addTab(comparison, tr("Comparison"));
    m_stageTable->setModel(m_stageModel);
    m_stageTable->setAlternatingRowColors(true);
    m_stageTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tabs->addTab(m_stageTable, tr("Per stage (top run)"));
    tabs->hide(); // shown once the window puts it in a layout
}

CompareView::~CompareView() = default;

TimelineView* CompareView::timeline(int slot) const
{
    return slot >= 0 && slot < kSlots ? m_slots[static_cast<std::size_t>(slot)].view : nullptr;
}

void CompareView::setSlot(
    int slot, const QString& title, const QString& detail, std::shared_ptr<const TimelineIndex> index)
{
    if (slot < 0 || slot >= kSlots) {
        return;
    }
    setSlotText(slot, title, detail);
    m_slots[static_cast<std::size_t>(slot)].view->setIndex(std::move(index));
}

void CompareView::setSlotText(int slot, const QString& title, const QString& detail)
{
    if (slot < 0 || slot >= kSlots) {
        return;
    }
    m_slots[static_cast<std::size_t>(slot)].title->setText(QStringLiteral("<b>") + title.toHtmlEscaped()
        + QStringLiteral("</b>&nbsp;&nbsp;<span style='color:#6b7280'>") + detail.toHtmlEscaped()
        + QStringLiteral("</span>"));
}

void CompareView::setSummaries(std::vector<RunSummary> summaries)
{
    m_model->setRuns(std::move(summaries));
    m_table->resizeColumnsToContents();
}

void CompareView::setStageReport(const profiler::Report& report)
{
    m_stageModel->setReport(report);
}

void CompareView::fitToRuns()
{
    TimeNs lo = std::numeric_limits<TimeNs>::max();
    TimeNs hi = std::numeric_limits<TimeNs>::min();
    for (const Slot& s : m_slots) {
        const TimelineIndex* index = s.view->index();
        if (index && index->eventCount() > 0) {
            lo = std::min(lo, index->startTime());
            hi = std::max(hi, index->endTime());
        }
    }
    if (lo <= hi) {
        m_zoom->resetRange(lo, hi);
    }
}

} // namespace bs::ui
