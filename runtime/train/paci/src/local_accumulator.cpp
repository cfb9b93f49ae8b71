#include "bubblescope/paci/local_accumulator.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bs::paci {

namespace {

struct ParamState
{
    at::Tensor expAvg; // same shape as the parameter
    at::Tensor expAvgSq; // same shape as the parameter
    std::int64_t steps = 0;
    bool decay = false; // dim() >= 2
};

} // namespace

struct LocalAccumulator::Impl
{
    std::vector<at::Tensor> params;
    std::vector<ParamState> state;
    AccumulatorOptions options;
    int version = 0;
    int counted = 0;
    std::int64_t tagged = 0;
    DriftStats stats;
    // Drift samples of parameters on an accelerator: (‖θ_B − θ_F‖², ‖θ_F‖²) as a 2-element double
    // tensor on the device each, read to the host together by settleDrift().
    std::vector<at::Tensor> driftOnDevice;

    void addDrift(double diff2, double base2)
    {
        const double drift = base2 > 0.0 ? std::sqrt(diff2) / std::sqrt(base2) : 0.0;
        stats.driftSamples += 1;
        stats.driftSum += drift;
        stats.driftMax = std::max(stats.driftMax, drift);
    }

    // One host read for every sample still on the device.
    void settleDrift()
    {
        if (driftOnDevice.empty()) {
            return;
        }
        const at::Tensor host = at::stack(driftOnDevice).to(at::kCPU).contiguous();
        driftOnDevice.clear();
        const double* v = host.data_ptr<double>();
        for (std::int64_t i = 0; i < host.size(0); ++i) {
            addDrift(v[2 * i], v[2 * i + 1]);
        }
    }

    // One AdamW step, written exactly as torch::optim::AdamW (LibTorch 1.13) does it, but on
    // param.data(): that view has its own version counter, so pending graphs stay valid.
    void adamw(std::size_t i, double lr)
    {
        const at::Tensor& param = params[i];
        const at::Tensor& grad = param.grad();
        if (!grad.defined()) {
            return;
        }
        ParamState& st = state[i];
        at::Tensor data = param.data();
        const AdamWOptions& o = options.adamw;
        if (st.decay && o.weightDecay != 0.0) {
            data.mul_(1.0 - lr * o.weightDecay);
        }
        st.steps += 1;
        const double biasCorrection1 = 1.0 - std::pow(o.beta1, static_cast<double>(st.steps));
        const double biasCorrection2 = 1.0 - std::pow(o.beta2, static_cast<double>(st.steps));
        st.expAvg.mul_(o.beta1).add_(grad, 1.0 - o.beta1);
        st.expAvgSq.mul_(o.beta2).addcmul_(grad, grad, 1.0 - o.beta2);
        const at::Tensor denom = (st.expAvgSq.sqrt() / std::sqrt(biasCorrection2)).add_(o.eps);
        const double stepSize = lr / biasCorrection1;
        data.addcdiv_(st.expAvg, denom, -stepSize);
    }
};

LocalAccumulator::LocalAccumulator(std::vector<at::Tensor> parameters, AccumulatorOptions options)
    : m_impl(std::make_unique<Impl>())
{
    if (options.accum < 1) {
        throw std::invalid_argument("LocalAccumulator: accum must be >= 1, got " + std::to_string(options.accum));
    }
    if (options.driftSampleEvery < 0) {
        throw std::invalid_argument("LocalAccumulator: driftSampleEvery must be >= 0");
    }
    m_impl->options = options;
    m_impl->params = std::move(parameters);
    at::NoGradGuard noGrad;
    m_impl->state.reserve(m_impl->params.size());
    for (const at::Tensor& p : m_impl->params) {
        ParamState st;
        st.expAvg = at::zeros_like(p, at::MemoryFormat::Preserve);
        st.expAvgSq = at::zeros_like(p, at::MemoryFormat::Preserve);
        st.decay = p.dim() >= 2;
        m_impl->state.push_back(std::move(st));
    }
}

void LocalAccumulator::reconfigure(const AccumulatorOptions& options)
{
    if (options.accum < 1 || options.driftSampleEvery < 0) {
        throw std::invalid_argument("LocalAccumulator::reconfigure: accum must be >= 1 and driftSampleEvery >= 0");
    }
    if (m_impl->counted != 0) {
        throw std::invalid_argument("LocalAccumulator::reconfigure: " + std::to_string(m_impl->counted)
            + " backward passes are counted in the current window");
    }
    m_impl->options = options;
}

LocalAccumulator::~LocalAccumulator() = default;
LocalAccumulator::LocalAccumulator(LocalAccumulator&&) noexcept = default;
LocalAccumulator& LocalAccumulator::operator=(LocalAccumulator&&) noexcept = default;

double LocalAccumulator::lossScale() const
{
    return 1.0 / static_cast<double>(m_impl->options.accum);
}

bool LocalAccumulator::afterBackward()
{
    m_impl->counted += 1;
    if (m_impl->counted < m_impl->options.accum) {
        return false;
    }
    if (m_impl->options.autoStep) {
        step();
    }
    return true;
}

bool LocalAccumulator::updateDue() const
{
    return m_impl->counted >= m_impl->options.accum;
}

void LocalAccumulator::step()
{
    at::NoGradGuard noGrad;
    const double lr = nextLr();
    for (std::size_t i = 0; i < m_impl->params.size(); ++i) {
        m_impl->adamw(i, lr);
    }
    for (const at::Tensor& p : m_impl->params) {
        at::Tensor grad = p.grad();
        if (grad.defined()) {
            grad.zero_(); // in place: the buffer (and its memory) is reused by the next window
        }
    }
    m_impl->counted = 0;
    m_impl->version += 1;
}

AccumulatorState LocalAccumulator::exportState() const
{
    if (m_impl->counted != 0) {
        throw std::invalid_argument("LocalAccumulator::exportState: " + std::to_string(m_impl->counted)
            + " backward passes are counted in the current window");
    }
    at::NoGradGuard noGrad;
    AccumulatorState out;
    for (const ParamState& st : m_impl->state) {
        out.expAvg.push_back(st.expAvg.detach().clone());
        out.expAvgSq.push_back(st.expAvgSq.detach().clone());
        out.steps.push_back(st.steps);
    }
    out.version = m_impl->version;
    out.tagged = m_impl->tagged;
    m_impl->settleDrift();
    out.stats = m_impl->stats;
    return out;
}

void LocalAccumulator::importState(const AccumulatorState& state)
{
    if (m_impl->counted != 0) {
        throw std::invalid_argument("LocalAccumulator::importState: " + std::to_string(m_impl->counted)
            + " backward passes are counted in the current window");
    }
    const std::size_t n = m_impl->state.size();
    if (state.expAvg.size() != n || state.expAvgSq.size() != n || state.steps.size() != n) {
        throw std::invalid_argument("LocalAccumulator::importState: " + std::to_string(state.expAvg.size())
            + " moment tensors for " + std::to_string(n) + " parameters");
    }
    for (std::size_t i = 0; i < n; ++i) {
        const at::Tensor& like = m_impl->state[i].expAvg;
        if (!state.expAvg[i].defined() || !state.expAvgSq[i].defined() || state.expAvg[i].sizes() != like.sizes()
            || state.expAvgSq[i].sizes() != like.sizes() || state.steps[i] < 0) {
            throw std::invalid_argument("LocalAccumulator::importState: parameter " + std::to_string(i)
                + ": moment shape or step count does not match");
        }
    }
    if (state.version < 0 || state.tagged < 0) {
        throw std::invalid_argument("LocalAccumulator::importState: negative version or tag count");
    }
    at::NoGradGuard noGrad;
    for (std::size_t i = 0; i < n; ++i) {
        ParamState& st = m_impl->state[i];
        st.expAvg.copy_(state.expAvg[i]); // in place: the moments keep their device and memory charge
        st.expAvgSq.copy_(state.expAvgSq[i]);
        st.steps = state.steps[i];
    }
    m_impl->version = state.version;
    m_impl->tagged = state.tagged;
    m_impl->driftOnDevice.clear();
    m_impl->stats = state.stats;
}

int LocalAccumulator::version() const
{
    return m_impl->version;
}
int LocalAccumulator::accum() const
{
    return m_impl->options.accum;
}
int LocalAccumulator::backwardsSinceUpdate() const
{
    return m_impl->counted;
}
double LocalAccumulator::nextLr() const
{
    return m_impl->options.lr.lrAt(m_impl->version);
}
const std::vector<at::Tensor>& LocalAccumulator::parameters() const
{
    return m_impl->params;
}
const AccumulatorOptions& LocalAccumulator::options() const
{
    return m_impl->options;
}

ForwardTag LocalAccumulator::tagForward(std::int64_t microbatch)
{
    ForwardTag tag;
    tag.microbatch = microbatch;
    tag.version = m_impl->version;
    const int every = m_impl->options.driftSampleEvery;
    if (every > 0 && m_impl->tagged % every == 0) {
        at::NoGradGuard noGrad;
        auto copy = std::make_shared<std::vector<at::Tensor>>();
        copy->reserve(m_impl->params.size());
        for (const at::Tensor& p : m_impl->params) {
            copy->push_back(p.detach().clone());
        }
        tag.snapshot = std::move(copy);
    }
    m_impl->tagged += 1;
    return tag;
}

BackwardObservation LocalAccumulator::observeBackward(const ForwardTag& tag)
{
    BackwardObservation obs;
    obs.lag = m_impl->version - tag.version;
    DriftStats& s = m_impl->stats;
    const auto bucket = static_cast<std::size_t>(obs.lag < 0 ? 0 : obs.lag);
    if (s.lagHistogram.size() <= bucket) {
        s.lagHistogram.resize(bucket + 1, 0);
    }
    s.lagHistogram[bucket] += 1;
    s.maxLag = std::max(s.maxLag, obs.lag);
    if (tag.snapshot && tag.snapshot->size() == m_impl->params.size()) {
        at::NoGradGuard noGrad;
        // Sums on the parameters' device; no .item() per parameter (on a GPU each would be a
        // synchronisation inside the timed backward).
        std::vector<at::Tensor> diffs;
        std::vector<at::Tensor> bases;
        for (std::size_t i = 0; i < m_impl->params.size(); ++i) {
            const at::Tensor& before = (*tag.snapshot)[i];
            diffs.push_back((m_impl->params[i].detach() - before).pow(2).sum().to(at::kDouble));
            bases.push_back(before.pow(2).sum().to(at::kDouble));
        }
        if (diffs.empty()) {
            m_impl->addDrift(0.0, 0.0);
            obs.drift = 0.0;
            return obs;
        }
        const at::Tensor both = at::stack({at::stack(diffs).sum(), at::stack(bases).sum()});
        if (!both.is_cpu()) {
            // Read later (stats()): a read here waits for the device inside the timed backward.
            m_impl->driftOnDevice.push_back(both);
            return obs;
        }
        const at::Tensor host = both.contiguous();
        const double diff2 = host.data_ptr<double>()[0];
        const double base2 = host.data_ptr<double>()[1];
        m_impl->addDrift(diff2, base2);
        obs.drift = base2 > 0.0 ? std::sqrt(diff2) / std::sqrt(base2) : 0.0;
    }
    return obs;
}

const DriftStats& LocalAccumulator::stats() const
{
    m_impl->settleDrift();
    return m_impl->stats;
}
void LocalAccumulator::resetStats()
{
    m_impl->driftOnDevice.clear(); // samples taken before the reset
    m_impl->stats = DriftStats{};
}

std::int64_t LocalAccumulator::parameterBytes() const
{
    std::int64_t bytes = 0;
    for (const at::Tensor& p : m_impl->params) {
        bytes += static_cast<std::int64_t>(p.nbytes());
    }
    return bytes;
}

std::int64_t LocalAccumulator::optimizerStateBytes() const
{
    std::int64_t bytes = 0;
    for (const ParamState& st : m_impl->state) {
        bytes += static_cast<std::int64_t>(st.expAvg.nbytes() + st.expAvgSq.nbytes());
    }
    return bytes;
}

} // namespace bs::paci
