#include "profiler/import/action_recovery.h"

#include "profiler/import/action_labels_p.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace bs::profiler::kineto {

std::string_view labelSourceName(LabelSource source)
{
    switch (source) {
    case LabelSource::PipelineAnnotations: return "PP: annotations";
    case LabelSource::GPipeNames: return "Forward/Backward names";
    case LabelSource::Inferred: return "inferred from autograd";
    }
    return "?";
}

namespace {

using detail::Label;
using detail::LabelKind;
using detail::parseGPipeLabel;
using detail::parseInt;
using detail::parsePipelineLabel;
using detail::startsWith;

bool isP2pOp(std::string_view name)
{
    return name == "c10d::send" || name == "c10d::recv_" || name == "c10d::recv_any_source_";
}

bool isBackwardOp(std::string_view name) { return startsWith(name, "autograd::engine::evaluate_function:"); }

bool isNcclKernel(std::string_view name) { return name.find("nccl") != std::string_view::npos; }

int dtypeBytes(std::string_view dtype)
{
    if (dtype == "Float" || dtype == "Int" || dtype == "float32") {
        return 4;
    }
    if (dtype == "Half" || dtype == "BFloat16" || dtype == "bfloat16" || dtype == "float16") {
        return 2;
    }
    if (dtype == "Double" || dtype == "Long") {
        return 8;
    }
    return dtype.empty() ? 0 : 1;
}

/// A top-level compute op (forward work or a backward node) on a CPU thread.
struct ComputeOp
{
    TimeNs start = 0, end = 0;
    bool backward = false;
    std::vector<std::int64_t> sequences; ///< its own and its descendants' autograd sequence numbers
    std::ptrdiff_t segment = 0; ///< the step it ran in (ProfilerStep#N starts, optimizer ends)
};

class Recovery
{
public:
    Recovery(const RankTrace& trace, int pipelineRank)
        : m_trace(trace)
        , m_rank(pipelineRank)
    {
    }

    RankActions run()
    {
        collect();
        buildActions();
        m_cpuActions = m_out.actions; // sends and receives are placed among CPU-side actions
        std::sort(m_cpuActions.begin(), m_cpuActions.end(),
                  [](const RecoveredAction& a, const RecoveredAction& b) { return a.start < b.start; });
        gpuExtents();
        buildComms();
        std::sort(m_out.actions.begin(), m_out.actions.end(),
                  [](const RecoveredAction& a, const RecoveredAction& b) { return a.start < b.start; });
        std::sort(m_out.comms.begin(), m_out.comms.end(), [](const CommOp& a, const CommOp& b) { return a.posted < b.posted; });
        std::unordered_set<int> stages;
        for (const auto& a : m_out.actions) {
            if (a.kind != EventKind::Update) {
                stages.insert(a.stage);
            }
        }
        m_out.stages.assign(stages.begin(), stages.end());
        std::sort(m_out.stages.begin(), m_out.stages.end());
        return std::move(m_out);
    }

private:
    std::string_view name(const Event& e) const { return m_trace.names[e.name]; }

    void collect()
    {
        std::vector<std::size_t> order(m_trace.events.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            order[i] = i;
        }
        const auto& ev = m_trace.events;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return ev[a].start != ev[b].start ? ev[a].start < ev[b].start : ev[a].end > ev[b].end;
        });
        // A top-level op is forward work only when a backward of the same step carries its
        // sequence number. Autograd stamps every op with the number of the next node it will make,
        // so a step's gradient scaling (aten::div_) and optimizer ops carry the next step's first
        // node's number: in a profile of several steps they were taken for forwards (m = 7 of 6).
        std::vector<TimeNs> boundaries; // ProfilerStep#N starts and optimizer step ends
        for (const Event& e : ev) {
            const std::string_view n = name(e);
            if (e.category != Category::UserAnnotation && e.category != Category::CpuOp) {
                continue;
            }
            if (auto step = startsWith(n, "ProfilerStep#") ? parseInt(n.substr(13)) : std::nullopt) {
                m_out.profilerSteps.push_back({*step, e.start, e.end});
                boundaries.push_back(e.start);
            } else if (startsWith(n, "Optimizer.")) { // step and zero_grad: never pipeline work
                m_optimizer.push_back({e.start, e.end});
                if (startsWith(n, "Optimizer.step#")) {
                    boundaries.push_back(e.end);
                }
            }
        }
        std::sort(boundaries.begin(), boundaries.end());
        std::sort(m_optimizer.begin(), m_optimizer.end());
        std::sort(m_out.profilerSteps.begin(), m_out.profilerSteps.end(),
            [](const ProfilerStepRange& a, const ProfilerStepRange& b) { return a.start < b.start; });
        auto segment = [&](TimeNs t) {
            return std::upper_bound(boundaries.begin(), boundaries.end(), t) - boundaries.begin();
        };
        auto inOptimizer = [&](TimeNs t) {
            auto it = std::upper_bound(m_optimizer.begin(), m_optimizer.end(), std::make_pair(t, INT64_MAX));
            return it != m_optimizer.begin() && t < std::prev(it)->second;
        };
        std::unordered_map<std::int64_t, std::ptrdiff_t> backwardSequences; // sequence -> its backward's segment
        for (const Event& e : ev) {
            if (e.category == Category::CpuOp && e.sequence >= 0 && isBackwardOp(name(e))) {
                backwardSequences.emplace(e.sequence, segment(e.start));
            }
        }
        // Top-level CPU ops per thread (annotations such as gloo:recv do not nest, so only cpu_op
        // ranges define nesting).
        std::unordered_map<std::uint32_t, std::vector<std::pair<TimeNs, std::size_t>>> open; // thread -> (end, op index)
        for (const std::size_t i : order) {
            const Event& e = ev[i];
            const std::string_view n = name(e);
            switch (e.category) {
            case Category::UserAnnotation:
                if (auto pp = parsePipelineLabel(n)) {
                    pp->start = e.start, pp->end = e.end;
                    (pp->what == LabelKind::Compute ? m_ppCompute : m_ppComm).push_back(*pp);
                } else if (auto g = parseGPipeLabel(n, m_rank)) {
                    g->start = e.start, g->end = e.end;
                    m_gpipe.push_back(*g);
                } else if (startsWith(n, "Optimizer.step#")) {
                    m_updates.push_back({e.start, e.end});
                } else if (n == "gloo:recv" || n == "gloo:send") {
                    (n == "gloo:recv" ? m_glooRecv : m_glooSend).push_back({e.start, e.end});
                }
                break;
            case Category::GpuUserAnnotation:
                if (auto pp = parsePipelineLabel(n); pp && pp->what == LabelKind::Compute) {
                    pp->start = e.start, pp->end = e.end;
                    m_gpuLabels.push_back(*pp);
                }
                break;
            case Category::Kernel:
                m_out.gpu = true;
                m_kernels.push_back(i);
                break;
            case Category::Runtime:
                if (e.correlation >= 0) {
                    m_launch[e.correlation] = e.start;
                }
                break;
            case Category::CpuOp: {
                if (startsWith(n, "ProfilerStep#")) {
                    break; // a range around the whole step, not an op
                }
                auto& stack = open[e.thread];
                while (!stack.empty() && stack.back().first <= e.start) {
                    stack.pop_back();
                }
                if (isP2pOp(n) && stack.empty()) {
                    m_p2p.push_back(i);
                }
                if (stack.empty()) {
                    const bool backward = isBackwardOp(n);
                    if (backward || (e.sequence >= 0 && !startsWith(n, "c10d::") && !inOptimizer(e.start))) {
                        m_ops.push_back({e.start, e.end, backward, {}, segment(e.start)});
                        stack.push_back({e.end, m_ops.size() - 1});
                    } else {
                        stack.push_back({e.end, SIZE_MAX});
                    }
                } else {
                    stack.push_back({e.end, stack.front().second});
                }
                const std::size_t top = stack.front().second;
                if (top != SIZE_MAX && e.sequence >= 0) {
                    auto carried = backwardSequences.find(e.sequence);
                    if (carried != backwardSequences.end() && carried->second == m_ops[top].segment) {
                        m_ops[top].sequences.push_back(e.sequence);
                    }
                }
                break;
            }
            default:
                break;
            }
        }
        // Forward candidates that no backward refers to (tensor_split, detach_, ones_like...) are
        // bookkeeping, not stage compute.
        m_ops.erase(std::remove_if(m_ops.begin(), m_ops.end(), [](const ComputeOp& op) { return !op.backward && op.sequences.empty(); }),
                    m_ops.end());
    }

    /// First and last compute op starting inside [from, to].
    std::optional<std::pair<TimeNs, TimeNs>> computeHull(TimeNs from, TimeNs to) const
    {
        auto it = std::lower_bound(m_ops.begin(), m_ops.end(), from, [](const ComputeOp& op, TimeNs t) { return op.start < t; });
        std::optional<std::pair<TimeNs, TimeNs>> hull;
        for (; it != m_ops.end() && it->start <= to; ++it) {
            hull = hull ? std::make_pair(hull->first, std::max(hull->second, it->end)) : std::make_pair(it->start, it->end);
        }
        return hull;
    }

    void addLabelled(const std::vector<Label>& labels)
    {
        for (const Label& l : labels) {
            RecoveredAction a{l.stage, l.kind, l.microbatch, l.start, l.end, false};
            if (auto hull = computeHull(l.start, l.end)) {
                a.start = hull->first;
                a.end = std::min(hull->second, std::max(l.end, hull->first));
            }
            m_out.actions.push_back(a);
        }
    }

    void buildActions()
    {
        if (!m_ppCompute.empty()) {
            m_out.source = LabelSource::PipelineAnnotations;
            addLabelled(m_ppCompute);
        } else if (!m_gpipe.empty()) {
            m_out.source = LabelSource::GPipeNames;
            addLabelled(m_gpipe);
        } else {
            m_out.source = LabelSource::Inferred;
            infer();
        }
        int updates = 0;
        for (const auto& [start, end] : m_updates) {
            m_out.actions.push_back({m_rank, EventKind::Update, updates++, start, end, false});
        }
    }

    // Runs of one kind, broken by a send/recv or the optimizer.
    void infer()
    {
        std::vector<TimeNs> breaks;
        for (const std::size_t i : m_p2p) {
            breaks.push_back(m_trace.events[i].start);
        }
        for (const auto& u : m_updates) {
            breaks.push_back(u.first);
        }
        std::sort(breaks.begin(), breaks.end());
        std::unordered_map<std::int64_t, int> forwardOfSequence;
        int forwards = 0;
        std::size_t b = 0;
        RecoveredAction* current = nullptr;
        std::vector<std::int64_t> currentSequences;
        auto close = [&] {
            if (current && current->kind == EventKind::Backward) {
                int mb = -1;
                for (const std::int64_t s : currentSequences) {
                    if (auto it = forwardOfSequence.find(s); it != forwardOfSequence.end()) {
                        mb = it->second;
                        break;
                    }
                }
                current->microbatch = mb;
            }
            current = nullptr;
            currentSequences.clear();
        };
        std::size_t nextUpdate = 0;
        for (const ComputeOp& op : m_ops) {
            bool broken = false;
            while (b < breaks.size() && breaks[b] <= op.start) {
                broken = true;
                ++b;
            }
            // Micro-batches are numbered per step (from 0 after each optimizer step), like PyTorch's.
            while (nextUpdate < m_updates.size() && m_updates[nextUpdate].second <= op.start) {
                ++nextUpdate;
                forwards = 0;
            }
            const EventKind kind = op.backward ? EventKind::Backward : EventKind::Forward;
            if (broken || !current || current->kind != kind) {
                close();
                m_out.actions.push_back({m_rank, kind, kind == EventKind::Forward ? forwards++ : -1, op.start, op.end, false});
                current = &m_out.actions.back();
            }
            current->end = std::max(current->end, op.end);
            for (const std::int64_t s : op.sequences) {
                if (kind == EventKind::Forward) {
                    forwardOfSequence.emplace(s, current->microbatch);
                } else {
                    currentSequences.push_back(s);
                }
            }
        }
        close();
        // A backward whose forward was not seen (it ran before the profiler started): number it
        // after the last known one, in order.
        int nextBackward = 0;
        std::size_t update = 0;
        for (auto& a : m_out.actions) {
            while (update < m_updates.size() && m_updates[update].second <= a.start) {
                ++update;
                nextBackward = 0;
            }
            if (a.kind == EventKind::Backward) {
                if (a.microbatch < 0) {
                    a.microbatch = nextBackward;
                }
                nextBackward = a.microbatch + 1;
            }
        }
    }

    // On a GPU the compute stream is what idles: extents come from gpu_user_annotation ranges
    // when the runtime wrote them, else from the non-NCCL kernels launched inside the action.
    void gpuExtents()
    {
        if (!m_out.gpu) {
            return;
        }
        if (!m_gpuLabels.empty()) {
            std::vector<RecoveredAction> gpuActions;
            for (const Label& l : m_gpuLabels) {
                gpuActions.push_back({l.stage, l.kind, l.microbatch, l.start, l.end, true});
            }
            for (const auto& a : m_out.actions) {
                if (a.kind == EventKind::Update) {
                    gpuActions.push_back(a);
                }
            }
            m_out.actions = std::move(gpuActions);
            m_out.source = LabelSource::PipelineAnnotations;
            return;
        }
        // CPU windows: the label (which holds the launches) where there is one, else the hull.
        std::vector<std::pair<TimeNs, TimeNs>> windows;
        for (const auto& a : m_out.actions) {
            windows.push_back({a.start, a.end});
        }
        const std::vector<Label>& labels = !m_ppCompute.empty() ? m_ppCompute : m_gpipe;
        if (labels.size() == windows.size() - m_updates.size()) {
            for (std::size_t i = 0; i < labels.size(); ++i) {
                windows[i] = {labels[i].start, labels[i].end};
            }
        }
        std::vector<std::optional<std::pair<TimeNs, TimeNs>>> gpu(windows.size());
        for (const std::size_t k : m_kernels) {
            const Event& e = m_trace.events[k];
            auto launch = m_launch.find(e.correlation);
            if (isNcclKernel(name(e)) || launch == m_launch.end()) {
                continue;
            }
            for (std::size_t i = 0; i < windows.size(); ++i) {
                if (windows[i].first <= launch->second && launch->second <= windows[i].second) {
                    auto& g = gpu[i];
                    g = g ? std::make_pair(std::min(g->first, e.start), std::max(g->second, e.end)) : std::make_pair(e.start, e.end);
                    break;
                }
            }
        }
        for (std::size_t i = 0; i < gpu.size(); ++i) {
            if (gpu[i]) {
                m_out.actions[i].start = gpu[i]->first;
                m_out.actions[i].end = gpu[i]->second;
                m_out.actions[i].onGpu = true;
            }
        }
    }

    /// Ties a send or receive issued at `at` to (stage, peer, direction, micro-batch).
    bool label(CommOp& op, TimeNs at, TimeNs gpuStart = -1) const
    {
        for (const Label& l : m_ppComm) {
            if (l.start <= at && at <= l.end) {
                const bool activation = l.what == LabelKind::SendF || l.what == LabelKind::RecvF;
                op.isSend = l.what == LabelKind::SendF || l.what == LabelKind::SendB;
                op.stage = l.stage;
                op.direction = activation ? Direction::Activation : Direction::Gradient;
                op.peerStage = l.stage + ((activation == op.isSend) ? 1 : -1);
                op.microbatch = l.microbatch;
                return true;
            }
        }
        // No label: a send carries the output of the last action that ended before it, a receive
        // the input of the next action that starts after it.
        // Only GPU-side ranges (no CPU labels): place the kernel among them by its GPU start.
        const bool cpuCompute = std::any_of(m_cpuActions.begin(), m_cpuActions.end(),
                                            [](const RecoveredAction& a) { return a.kind != EventKind::Update; });
        const bool gpuOnly = !cpuCompute && gpuStart >= 0;
        const std::vector<RecoveredAction>& among = gpuOnly ? m_out.actions : m_cpuActions;
        if (gpuOnly) {
            at = gpuStart;
        }
        const RecoveredAction* pick = nullptr;
        for (const auto& a : among) {
            if (a.kind == EventKind::Update) {
                continue;
            }
            if (op.isSend && a.end <= at) {
                pick = &a;
            }
            if (!op.isSend && a.start >= at) {
                pick = &a;
                break;
            }
        }
        if (!pick) {
            return false;
        }
        const bool activation = pick->kind == EventKind::Forward;
        op.stage = pick->stage;
        op.direction = activation ? Direction::Activation : Direction::Gradient;
        op.peerStage = pick->stage + ((activation == op.isSend) ? 1 : -1);
        op.microbatch = pick->microbatch;
        return true;
    }

    void buildComms()
    {
        bool nccl = false;
        for (const std::size_t k : m_kernels) {
            const Event& e = m_trace.events[k];
            if (!isNcclKernel(name(e))) {
                continue;
            }
            nccl = true;
            CommOp op;
            op.onGpu = true;
            op.comm = e.comm;
            op.posted = e.start;
            op.completed = e.end;
            op.returned = e.start;
            const CommInfo* info = e.comm >= 0 ? &m_trace.comms[static_cast<std::size_t>(e.comm)] : nullptr;
            if (info) {
                op.isSend = info->collective == "send";
                const std::int64_t elements = std::max(info->inElements, info->outElements);
                op.bytes = elements > 0 ? elements * dtypeBytes(info->dtype) : 0;
                if (info->collective != "send" && info->collective != "recv") {
                    continue; // a collective (all-reduce of data parallelism), not a pipeline transfer
                }
            }
            auto launch = m_launch.find(e.correlation);
            if (!label(op, launch != m_launch.end() ? launch->second : e.start, e.start)) {
                ++m_out.unlabelledComms;
                continue;
            }
            m_out.comms.push_back(op);
        }
        if (nccl) {
            return;
        }
        // Gloo: the c10d op posts; its gloo:send / gloo:recv range ends when the data has moved.
        std::size_t nextRecv = 0, nextSend = 0;
        for (const std::size_t i : m_p2p) {
            const Event& e = m_trace.events[i];
            CommOp op;
            op.isSend = name(e) == "c10d::send";
            op.posted = e.start;
            op.completed = e.end;
            op.returned = e.end;
            auto& gloo = op.isSend ? m_glooSend : m_glooRecv;
            std::size_t& next = op.isSend ? nextSend : nextRecv;
            while (next < gloo.size() && gloo[next].first < e.start) {
                ++next;
            }
            if (next < gloo.size() && gloo[next].first <= e.end + 1000) {
                op.completed = std::max(op.completed, gloo[next].second);
                ++next;
            }
            if (!label(op, e.start)) {
                ++m_out.unlabelledComms;
                continue;
            }
            m_out.comms.push_back(op);
        }
    }

    const RankTrace& m_trace;
    int m_rank;
    RankActions m_out;
    std::vector<Label> m_ppCompute, m_ppComm, m_gpipe, m_gpuLabels;
    std::vector<std::pair<TimeNs, TimeNs>> m_updates, m_glooRecv, m_glooSend, m_optimizer;
    std::vector<ComputeOp> m_ops; ///< by start
    std::vector<std::size_t> m_p2p, m_kernels;
    std::unordered_map<std::int64_t, TimeNs> m_launch; ///< correlation -> launch time
    std::vector<RecoveredAction> m_cpuActions;
};

} // namespace

RankActions recoverActions(const RankTrace& trace, int pipelineRank)
{
    return Recovery(trace, pipelineRank).run();
}

} // namespace bs::profiler::kineto
