#include "ui/compare/compare_view.h"

#include "ui/common/palette.h"
#include "ui/timeline/timeline_legend.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"

#include "ui/common/format.h"
#include "ui/timeline/event_search.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLineEdit>
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
    m_legend = legend;
    auto* top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(legend, 1);
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("findBox"));
    m_find->setPlaceholderText(tr("Find: 1F2, stage 1 backward, mb 5"));
    m_find->setClearButtonEnabled(true);
    m_find->setMaximumWidth(240);
    m_find->setToolTip(tr("Jump to an action: model stage, kind and/or micro-batch (Enter: next match). Where a "
                          "rank holds several stages, \"stage 5\" and \"5F2\" are model stage (chunk) 5, on the "
                          "lane of the rank that holds it, not rank 5; a rank's updates count for each of its stages"));
    m_findResult = new QLabel(this);
    m_findResult->setStyleSheet(QStringLiteral("color: #6b7280;"));
    top->addWidget(m_findResult);
    top->addWidget(m_find);
    lanes->addLayout(top);
    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNext(m_find->text()); });
    for (int i = 0; i < kSlots; ++i) {
        Slot slot;
        slot.title = new QLabel(this);
        slot.title->setTextFormat(Qt::RichText);
        // A long title (an imported job's figures) wraps onto a second line rather than widening
        // the window past a laptop screen; the tooltip carries it on one line.
        slot.title->setWordWrap(true);
        slot.title->setContentsMargins(4, 6, 0, 0);
        slot.view = new TimelineView(this);
        slot.view->setZoom(m_zoom);
        slot.view->setShowRuler(true);
        lanes->addWidget(slot.title);
        lanes->addWidget(slot.view, 1);
        slot.view->installEventFilter(this);
        slot.title->installEventFilter(this);
        slot.title->setCursor(Qt::PointingHandCursor);
        slot.title->setToolTip(tr("Click to select this run: the tuning panel, charts and exports follow it"));
        slot.title->setVisible(i < 2); // the first two show the what-if's predictions; the rest hold runs
        slot.view->setVisible(i < 2);
        m_slots.push_back(slot);
    }
    m_prediction.title = new QLabel(this);
    m_prediction.title->setObjectName(QStringLiteral("predictionTitle"));
    m_prediction.title->setTextFormat(Qt::RichText);
    m_prediction.title->setWordWrap(true);
    m_prediction.title->setContentsMargins(4, 6, 0, 0);
    m_prediction.view = new TimelineView(this);
    m_prediction.view->setObjectName(QStringLiteral("predictionLane"));
    m_prediction.view->setZoom(m_zoom);
    m_prediction.view->setShowRuler(true);
    lanes->addWidget(m_prediction.title);
    lanes->addWidget(m_prediction.view, 1);
    m_prediction.title->hide();
    m_prediction.view->hide();

    m_table->setModel(m_model);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setAlternatingRowColors(true);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter); // two-line run labels
    m_table->setWordWrap(false);
    m_table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents); // hint: every column whole
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
    tabs->addTab(m_stageTable, tr("Per stage (selected run)"));
    tabs->hide(); // shown once the window puts it in a layout
    fitTablePanel();
}

CompareView::~CompareView() = default;

bool CompareView::slotShown(int slot) const
{
    return slot >= 0 && slot < kSlots && !m_slots[static_cast<std::size_t>(slot)].view->isHidden();
}

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
    Slot& s = m_slots[static_cast<std::size_t>(slot)];
    const bool shown = index != nullptr || !title.isEmpty();
    s.view->setIndex(std::move(index));
    s.title->setVisible(shown);
    s.view->setVisible(shown);
    updateLegendChunks();
}

void CompareView::updateLegendChunks()
{
    int chunks = 1;
    for (const Slot& s : m_slots) {
        if (const TimelineIndex* index = s.view->index()) {
            chunks = std::max(chunks, index->stagesPerRank());
        }
    }
    if (const TimelineIndex* index = m_prediction.view->index()) {
        chunks = std::max(chunks, index->stagesPerRank());
    }
    m_legend->setChunks(chunks);
    // Lanes are ranks there: say that the find box's stage is the model stage.
    m_find->setPlaceholderText(chunks > 1 ? tr("Find: 5F2, model stage 5 backward, mb 5")
                                          : tr("Find: 1F2, stage 1 backward, mb 5"));
}

void CompareView::setSlotText(int slot, const QString& title, const QString& detail)
{
    if (slot < 0 || slot >= kSlots) {
        return;
    }
    Slot& s = m_slots[static_cast<std::size_t>(slot)];
    s.text = QStringLiteral("<b>") + title.toHtmlEscaped() + QStringLiteral("</b>&nbsp;&nbsp;<span style='color:#6b7280'>")
        + detail.toHtmlEscaped() + QStringLiteral("</span>");
    s.title->setToolTip(title + QStringLiteral(" · ") + detail); // the full line when the title is cut
    renderTitle(slot);
}

void CompareView::renderTitle(int slot)
{
    Slot& s = m_slots[static_cast<std::size_t>(slot)];
    s.title->setText((slot == m_selected ? QStringLiteral("<span style='color:#2563eb'>&#9654;</span> ") : QString()) + s.text);
}

void CompareView::setSelectedSlot(int slot)
{
    m_selected = slot >= 0 && slot < kSlots ? slot : -1;
    for (int i = 0; i < kSlots; ++i) {
        renderTitle(i);
    }
}

bool CompareView::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::MouseButtonPress) {
        for (int i = 0; i < kSlots; ++i) {
            const Slot& s = m_slots[static_cast<std::size_t>(i)];
            if ((watched == s.view || watched == s.title) && s.view->index() != nullptr) {
                Q_EMIT slotClicked(i);
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

void CompareView::setPrediction(const QString& title, const QString& detail, std::shared_ptr<const TimelineIndex> index)
{
    const bool show = index != nullptr;
    m_prediction.title->setText(QStringLiteral("<i><b>") + title.toHtmlEscaped()
        + QStringLiteral("</b></i>&nbsp;&nbsp;<span style='color:#6b7280'>") + detail.toHtmlEscaped()
        + QStringLiteral("</span>"));
    m_prediction.title->setToolTip(title + QStringLiteral(" · ") + detail);
    m_prediction.view->setIndex(std::move(index));
    m_prediction.title->setVisible(show);
    m_prediction.view->setVisible(show);
    updateLegendChunks();
}

int CompareView::findNext(const QString& query)
{
    const auto parsed = parseEventQuery(fromQt(query));
    const TimelineView* view = timeline(m_selected >= 0 ? m_selected : 0);
    const TimelineIndex* index = view ? view->index() : nullptr;
    if (!parsed || !index || !index->snapshot()) {
        m_findResult->setText(parsed ? tr("no run shown") : tr("say e.g. 1F2, stage 1 (model stage), backward, mb 5"));
        return 0;
    }
    const auto hits = findEvents(*index->snapshot(), *parsed,
        [index](const profiler::TraceEvent& e, std::size_t stage) { return index->isWorkOfStage(e, stage); });
    if (hits.empty()) {
        m_findResult->setText(tr("no match"));
        return 0;
    }
    if (query != m_lastQuery) {
        m_lastQuery = query;
        m_nextHit = 0;
    }
    const auto& e = (*index->snapshot())[hits[m_nextHit % hits.size()]];
    m_findResult->setText(tr("%1 of %2").arg(m_nextHit % hits.size() + 1).arg(hits.size()));
    ++m_nextHit;
    // Show the action with some context on either side.
    const double pad = std::max<double>(static_cast<double>(e.duration()) * 4, 1.0);
    m_zoom->setView(static_cast<double>(e.start) - pad, static_cast<double>(e.end) + pad);
    return static_cast<int>(hits.size());
}

void CompareView::setExporting(bool exporting)
{
    m_find->setVisible(!exporting);
    m_findResult->setVisible(!exporting);
}

bool CompareView::predictionVisible() const
{
    return m_prediction.view->index() != nullptr;
}

void CompareView::setSummaries(std::vector<ComparisonRow> summaries)
{
    m_model->setRuns(std::move(summaries));
    m_table->resizeColumnsToContents();
    m_table->resizeRowsToContents();
    fitTablePanel();
}

int CompareView::tableContentWidth() const
{
    int width = m_table->verticalHeader()->sizeHint().width() + 2 * m_table->frameWidth();
    for (int c = 0; c < m_model->columnCount(); ++c) {
        width += m_table->horizontalHeader()->sectionSize(c);
    }
    return width;
}

void CompareView::fitTablePanel()
{
    // The panel is as wide as the table's columns need (at least kMinTablePanelWidth), so every run
    // column is visible whole: the charts beside it take what is left.
    const int margins = 2 * 2 /* the comparison page's margins */ + 2 * 4 /* the tab frame */;
    const int needed = std::max(kMinTablePanelWidth, tableContentWidth() + margins);
    // Its width hint is what the columns need (AdjustToContents), its minimum only
    // kMinTablePanelWidth: more runs than a laptop screen has room for scroll sideways instead of
    // raising the window's minimum width past the screen.
    m_tablePanel->setMinimumWidth(kMinTablePanelWidth);
    // And as tall as its rows (the vertical scroll bar is off: a row below the frame was hidden).
    int height = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth();
    for (int r = 0; r < m_model->rowCount(); ++r) {
        height += m_table->verticalHeader()->sectionSize(r);
    }
    m_table->setFixedHeight(height);
    m_tablePanel->setMaximumWidth(std::max(needed, kMaxTablePanelWidth));
}

void CompareView::setStageReport(const profiler::Report& report)
{
    m_stageModel->setReport(report);
}

void CompareView::fitToRuns()
{
    TimeNs lo = std::numeric_limits<TimeNs>::max();
    TimeNs hi = std::numeric_limits<TimeNs>::min();
    std::vector<const Slot*> shown;
    for (const Slot& s : m_slots) {
        shown.push_back(&s);
    }
    shown.push_back(&m_prediction);
    for (const Slot* slot : shown) {
        const Slot& s = *slot;
        const TimelineIndex* index = s.view->index();
        if (index && index->eventCount() > 0) {
            lo = std::min(lo, index->startTime());
            hi = std::max(hi, index->endTime());
        }
    }
    if (lo <= hi) {
        m_zoom->resetRange(lo, hi);
    } else {
        m_zoom->clearRange(); // nothing shown: the next run's own span, not the last runs' one
    }
}

} // namespace bs::ui
