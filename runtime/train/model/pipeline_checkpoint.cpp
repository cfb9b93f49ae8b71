// PipelineModel::saveCheckpoint / loadCheckpoint: one torch archive per stage (weights, AdamW
// state, counters, statistics) and one of the random generators, in the file names of
// runtime/plan/rundir/checkpoint_state.h. Tensors are stored on the CPU, so a checkpoint taken on one
// device loads on another.
#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/pipeline_model_p.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/serialize/archive.h>

#include <set>
#include <sstream>

namespace bs::runtime {

using namespace detail;

namespace {

// The archive names (checkpoint_state.h's stageCheckpointFileName / rngCheckpointFileName; not
// linked here: bs_model does not depend on the run directory library).
std::filesystem::path stageFile(const std::filesystem::path& dir, int stage, int step)
{
    return dir / ("stage" + std::to_string(stage) + "-step" + std::to_string(step) + ".pt");
}
std::filesystem::path rngFile(const std::filesystem::path& dir, int step)
{
    return dir / ("rng-step" + std::to_string(step) + ".pt");
}

torch::Tensor cpu(const torch::Tensor& t)
{
    return t.detach().to(torch::kCPU).clone();
}

torch::Tensor int64s(const std::vector<std::int64_t>& v)
{
    return torch::tensor(v.empty() ? std::vector<std::int64_t>{} : v, torch::kInt64);
}

std::vector<std::int64_t> toInt64s(const torch::Tensor& t)
{
    const torch::Tensor c = t.to(torch::kCPU).to(torch::kInt64).contiguous().view(-1);
    return std::vector<std::int64_t>(c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel());
}

Status writeArchive(const std::filesystem::path& path, torch::serialize::OutputArchive& archive)
{
    return writeFileAtomic(path, [&](std::ostream& out) -> Status {
        try {
            archive.save_to(out);
        } catch (const std::exception& e) {
            return makeError(
                ErrorCode::IoError, std::string("cannot write the checkpoint archive: ") + e.what(), path.string());
        }
        return ok();
    });
}

Result<torch::serialize::InputArchive> readArchive(const std::filesystem::path& path, std::uint64_t maxBytes)
{
    auto bytes = readBoundedFile(path, maxBytes, "checkpoint archive");
    if (!bytes) {
        return bytes.error();
    }
    torch::serialize::InputArchive archive;
    try {
        std::istringstream in(std::move(*bytes));
        archive.load_from(in);
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::ParseError, std::string("not a checkpoint archive (") + e.what() + ")", path.string());
    }
    return archive;
}

// Reads `key` of an archive; a missing tensor or a shape other than `like`'s (when given) is a
// ParseError naming file and key.
Result<torch::Tensor> readTensor(torch::serialize::InputArchive& archive, const std::string& key,
    const std::filesystem::path& path, const torch::Tensor* like = nullptr)
{
    torch::Tensor t;
    try {
        archive.read(key, t);
    } catch (const std::exception&) {
        return makeError(
            ErrorCode::ParseError, "the checkpoint archive has no tensor '" + key + "'", path.string() + ": " + key);
    }
    if (like && (t.sizes() != like->sizes() || t.scalar_type() != like->scalar_type())) {
        return makeError(ErrorCode::ParseError,
            "checkpoint tensor '" + key
                + "' has another shape or type than the model's (a checkpoint of another model?)",
            path.string() + ": " + key);
    }
    return t;
}

// The generators whose state a run's dropout draws from: the CPU's, and each CUDA device's.
std::vector<at::Generator> generators(const ModelOptions& o, std::vector<std::string>& names)
{
    std::vector<at::Generator> out{at::detail::getDefaultCPUGenerator()};
    names.push_back("cpu");
    std::set<int> cuda;
    for (int s = 0; s < o.stages; ++s) {
        if (o.deviceOf(s) >= 0) {
            cuda.insert(o.deviceOf(s));
        }
    }
    for (int d : cuda) {
        out.push_back(at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(d))));
        names.push_back("cuda" + std::to_string(d));
    }
    return out;
}

} // namespace

Status PipelineModel::saveCheckpoint(const std::filesystem::path& dir, int step)
{
    Impl& d = *m_impl;
    if (pendingCount() != 0) {
        return makeError(ErrorCode::Internal, "checkpoint with micro-batches in flight",
            std::to_string(pendingCount()) + " pending");
    }
    try {
        for (int s = 0; s < stages(); ++s) {
            StageState& st = d.stages[static_cast<std::size_t>(s)];
            if (!st.acc) {
                continue; // another rank's stage
            }
            if (st.acc->backwardsSinceUpdate() != 0) {
                return makeError(
                    ErrorCode::Internal, "checkpoint with gradients not yet applied", "stage " + std::to_string(s));
            }
            Impl::dropUnusedStashes(st); // nothing pending: no old version is needed
            const paci::AccumulatorState state = st.acc->exportState();
            torch::serialize::OutputArchive archive;
            for (std::size_t i = 0; i < st.params.size(); ++i) {
                const std::string n = std::to_string(i);
                archive.write("param." + n, cpu(st.params[i]));
                archive.write("exp_avg." + n, cpu(state.expAvg[i]));
                archive.write("exp_avg_sq." + n, cpu(state.expAvgSq[i]));
            }
            archive.write("adam_steps", int64s(state.steps));
            archive.write("counters",
                int64s({static_cast<std::int64_t>(st.params.size()), state.version, state.tagged, state.stats.maxLag,
                    state.stats.driftSamples, st.maxStashed}));
            archive.write("lag_histogram", int64s(state.stats.lagHistogram));
            archive.write("drift",
                torch::tensor(std::vector<double>{state.stats.driftSum, state.stats.driftMax}, torch::kFloat64));
            if (Status w = writeArchive(stageFile(dir, s, step), archive); !w) {
                return w;
            }
        }
        std::vector<std::string> names;
        torch::serialize::OutputArchive rng;
        const std::vector<at::Generator> gens = generators(d.options, names);
        for (std::size_t i = 0; i < gens.size(); ++i) {
            at::Generator gen = gens[i];
            const std::lock_guard<std::mutex> lock(gen.mutex());
            rng.write("generator." + names[i], gen.get_state().clone());
        }
        return writeArchive(rngFile(dir, step), rng);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("checkpoint failed: ") + e.what(), dir.string());
    }
}

Status PipelineModel::loadCheckpoint(const std::filesystem::path& dir, int step)
{
    Impl& d = *m_impl;
    try {
        for (int s = 0; s < stages(); ++s) {
            StageState& st = d.stages[static_cast<std::size_t>(s)];
            if (!st.acc) {
                continue;
            }
            const std::filesystem::path path = stageFile(dir, s, step);
            // Weights and two moments, serialisation overhead well under the 1 MiB + 10 % allowed.
            const auto bound =
                static_cast<std::uint64_t>(3.3 * static_cast<double>(st.acc->parameterBytes())) + (1u << 20);
            auto archive = readArchive(path, bound);
            if (!archive) {
                return archive.error();
            }
            auto counters = readTensor(*archive, "counters", path);
            if (!counters) {
                return counters.error();
            }
            const std::vector<std::int64_t> c = toInt64s(*counters);
            if (c.size() != 6 || c[0] != static_cast<std::int64_t>(st.params.size()) || c[1] < 0 || c[2] < 0 || c[3] < 0
                || c[4] < 0 || c[5] < 0) {
                return makeError(ErrorCode::ParseError,
                    "checkpoint counters do not fit this stage (" + std::to_string(st.params.size())
                        + " parameter tensors)",
                    path.string() + ": counters");
            }
            paci::AccumulatorState state;
            std::vector<torch::Tensor> weights;
            for (std::size_t i = 0; i < st.params.size(); ++i) {
                const std::string n = std::to_string(i);
                const torch::Tensor like = st.params[i].detach();
                auto w = readTensor(*archive, "param." + n, path, &like);
                auto m1 = w ? readTensor(*archive, "exp_avg." + n, path, &like) : w;
                auto m2 = m1 ? readTensor(*archive, "exp_avg_sq." + n, path, &like) : m1;
                if (!m2) {
                    return m2.error();
                }
                weights.push_back(*w);
                state.expAvg.push_back(m1->to(like.device()));
                state.expAvgSq.push_back(m2->to(like.device()));
            }
            auto steps = readTensor(*archive, "adam_steps", path);
            auto lags = steps ? readTensor(*archive, "lag_histogram", path) : steps;
            auto drift = lags ? readTensor(*archive, "drift", path) : lags;
            if (!drift) {
                return drift.error();
            }
            state.steps = toInt64s(*steps);
            state.stats.lagHistogram = toInt64s(*lags);
            const torch::Tensor dr = drift->to(torch::kFloat64).contiguous().view(-1);
            if (state.steps.size() != st.params.size() || dr.numel() != 2) {
                return makeError(ErrorCode::ParseError, "checkpoint 'adam_steps' or 'drift' has the wrong length",
                    path.string() + ": adam_steps");
            }
            state.version = static_cast<int>(c[1]);
            state.tagged = c[2];
            state.stats.maxLag = static_cast<int>(c[3]);
            state.stats.driftSamples = c[4];
            state.stats.driftSum = dr[0].item<double>();
            state.stats.driftMax = dr[1].item<double>();
            try {
                st.acc->importState(state);
            } catch (const std::invalid_argument& e) {
                return makeError(ErrorCode::ParseError, e.what(), path.string());
            }
            torch::NoGradGuard noGrad;
            for (std::size_t i = 0; i < st.params.size(); ++i) {
                st.params[i].data().copy_(weights[i]); // data(): the parameter stays the autograd leaf it was
            }
            st.maxStashed = static_cast<int>(c[5]);
            st.stash.clear();
        }
        const std::filesystem::path path = rngFile(dir, step);
        auto archive = readArchive(path, std::uint64_t{16} << 20);
        if (!archive) {
            return archive.error();
        }
        std::vector<std::string> names;
        const std::vector<at::Generator> gens = generators(d.options, names);
        for (std::size_t i = 0; i < gens.size(); ++i) {
            auto state = readTensor(*archive, "generator." + names[i], path);
            if (!state) {
                return state.error();
            }
            at::Generator gen = gens[i];
            const std::lock_guard<std::mutex> lock(gen.mutex());
            try {
                gen.set_state(*state);
            } catch (const std::exception& e) {
                return makeError(ErrorCode::ParseError, std::string("not a generator state: ") + e.what(),
                    path.string() + ": generator." + names[i]);
            }
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("loading the checkpoint failed: ") + e.what(), dir.string());
    }
    return ok();
}

} // namespace bs::runtime
