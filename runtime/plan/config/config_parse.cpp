// parseRunConfig / loadRunConfig: toml++ parses, TableReader maps keys to fields strictly.
#include "base/bounded_read.h"
#include "runtime/plan/config/config_toml.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

namespace bs::runtime {

namespace {

std::string where(std::string_view sourceName, const toml::source_region& region)
{
    return std::string(sourceName) + ":" + std::to_string(region.begin.line) + ":"
        + std::to_string(region.begin.column);
}

std::string typeName(toml::node_type type)
{
    std::ostringstream o;
    o << type;
    return o.str();
}

/// Reads the keys of one table into fields, remembering the first error; finish() then rejects
/// keys nobody asked for. Missing keys leave the field untouched (its default).
class TableReader
{
public:
    TableReader(const toml::table* table, std::string name, std::string_view source)
        : m_table(table)
        , m_name(std::move(name))
        , m_source(source)
    {}

    void readInt(std::string_view key, int& out)
    {
        std::int64_t v = out;
        readInt64(key, v);
        if (m_error || !present(key)) {
            return;
        }
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
            fail(key, ErrorCode::ParseError,
                field(key) + " = " + std::to_string(v) + " does not fit in a 32-bit integer");
            return;
        }
        out = static_cast<int>(v);
    }

    void readInt64(std::string_view key, std::int64_t& out)
    {
        if (const toml::node* n = find(key)) {
            if (const auto* v = n->as_integer()) {
                out = v->get();
            } else {
                wrongType(key, *n, "an integer");
            }
        }
    }

    void readDouble(std::string_view key, double& out)
    {
        if (const toml::node* n = find(key)) {
            if (const auto* f = n->as_floating_point()) {
                out = f->get();
            } else if (const auto* i = n->as_integer()) {
                out = static_cast<double>(i->get());
            } else {
                wrongType(key, *n, "a number");
            }
        }
    }

    void readOptionalDouble(std::string_view key, std::optional<double>& out)
    {
        if (!present(key)) {
            m_known.emplace_back(key); // still an allowed key for finish()'s message
            return;
        }
        double v = 0.0;
        readDouble(key, v);
        out = v;
    }

    void readBool(std::string_view key, bool& out)
    {
        if (const toml::node* n = find(key)) {
            if (const auto* b = n->as_boolean()) {
                out = b->get();
            } else {
                wrongType(key, *n, "true or false");
            }
        }
    }

    void readString(std::string_view key, std::string& out)
    {
        if (const toml::node* n = find(key)) {
            if (const auto* s = n->as_string()) {
                out = s->get();
            } else {
                wrongType(key, *n, "a string");
            }
        }
    }

    void readIntList(std::string_view key, std::vector<int>& out)
    {
        const toml::node* n = find(key);
        if (!n) {
            return;
        }
        const auto* arr = n->as_array();
        if (!arr) {
            wrongType(key, *n, "an array of integers");
            return;
        }
        std::vector<int> values;
        for (const toml::node& item : *arr) {
            const auto* i = item.as_integer();
            if (!i || i->get() < std::numeric_limits<int>::min() || i->get() > std::numeric_limits<int>::max()) {
                wrongType(key, item, "an array of 32-bit integers");
                return;
            }
            values.push_back(static_cast<int>(i->get()));
        }
        out = std::move(values);
    }

    /// A key that is either a string or an array of integers (pipeline.partition): a string
    /// goes to `text`, an array to `list` with `text` set to `listName`.
    void readStringOrIntList(std::string_view key, std::string& text, std::vector<int>& list, const char* listName)
    {
        const toml::node* n = find(key);
        if (!n) {
            return;
        }
        if (const auto* str = n->as_string()) {
            text = str->get();
            return;
        }
        if (!n->as_array()) {
            wrongType(key, *n, "a string or an array of integers");
            return;
        }
        m_known.pop_back(); // readIntList records the key again
        readIntList(key, list);
        if (!m_error) {
            text = listName;
        }
    }

    const std::optional<Error>& error() const { return m_error; }

    bool present(std::string_view key) const { return m_table && m_table->get(key) != nullptr; }

    /// The first error, or an unknown-key error naming the key, the table and the allowed keys.
    std::optional<Error> finish()
    {
        if (m_error || !m_table) {
            return m_error;
        }
        for (const auto& [k, node] : *m_table) {
            const std::string key(k.str());
            if (std::find(m_known.begin(), m_known.end(), key) == m_known.end()) {
                std::string allowed;
                for (const std::string& known : m_known) {
                    allowed += (allowed.empty() ? "" : ", ") + known;
                }
                return makeError(ErrorCode::ParseError,
                    "unknown key '" + key + "' in table [" + m_name + "]; allowed keys: " + allowed,
                    where(m_source, k.source()));
            }
        }
        return std::nullopt;
    }

private:
    const toml::node* find(std::string_view key)
    {
        m_known.emplace_back(key);
        if (m_error || !m_table) {
            return nullptr;
        }
        return m_table->get(key);
    }

    std::string field(std::string_view key) const { return m_name + "." + std::string(key); }

    void wrongType(std::string_view key, const toml::node& n, std::string_view expected)
    {
        fail(key, ErrorCode::ParseError,
            field(key) + " must be " + std::string(expected) + ", got " + typeName(n.type()));
    }

    void fail(std::string_view key, ErrorCode code, std::string message)
    {
        if (!m_error) {
            const toml::node* n = m_table ? m_table->get(key) : nullptr;
            m_error = makeError(code, std::move(message), n ? where(m_source, n->source()) : std::string(m_source));
        }
    }

    const toml::table* m_table;
    std::string m_name;
    std::string_view m_source;
    std::vector<std::string> m_known;
    std::optional<Error> m_error;
};

std::optional<Error> readModel(TableReader& r, ModelConfig& model, std::string_view source)
{
    r.readString("preset", model.preset);
    if (r.error()) { // a type error on preset: report it before resolving the preset
        return r.error();
    }
    if (!model.preset.empty()) {
        Result<GptShape> shape = gptPreset(model.preset);
        if (!shape) {
            return makeError(ErrorCode::InvalidArgument,
                "model.preset: " + shape.error().message
                    + " (allowed: tiny, small, deep, gpt2-medium, or \"\" for an explicit shape)",
                std::string(source));
        }
        model.shape = *shape;
    }
    GptShape& s = model.shape;
    r.readInt("layers", s.layers);
    r.readInt("d_model", s.dModel);
    r.readInt("heads", s.heads);
    r.readInt("seq_len", s.seqLen);
    r.readInt("vocab", s.vocab);
    r.readDouble("dropout", s.dropout);
    r.readBool("tied_head", s.tiedHead);
    r.readString("dtype", model.dtype);
    r.readBool("recompute", model.recompute);
    return r.finish();
}

void readPipeline(TableReader& r, PipelineConfig& p)
{
    r.readInt("stages", p.stages);
    r.readInt("microbatches", p.microbatches);
    r.readInt("accum", p.accum);
    r.readInt("micro_batch_size", p.microBatchSize);
    r.readInt("extra_depth", p.extraDepth);
    r.readInt("stages_per_rank", p.stagesPerRank);
    r.readString("placement", p.placement);
    r.readIntList("layers_per_stage", p.layersPerStage);
    r.readStringOrIntList("partition", p.partition, p.partitionUnits, "explicit");
    r.readDouble("memory_budget_mib", p.memoryBudgetMiB);
}

void readOptimizer(TableReader& r, OptimizerConfig& o)
{
    r.readDouble("lr", o.lr);
    r.readDouble("beta1", o.beta1);
    r.readDouble("beta2", o.beta2);
    r.readDouble("eps", o.eps);
    r.readDouble("weight_decay", o.weightDecay);
    r.readInt("warmup_steps", o.warmupSteps);
    r.readInt("total_steps", o.totalSteps);
    r.readDouble("min_lr", o.minLr);
    r.readString("decay", o.decay);
    r.readString("lr_scaling", o.lrScaling);
    r.readInt("base_global_batch", o.baseGlobalBatch);
}

void readTraining(TableReader& r, TrainingConfig& t)
{
    r.readInt("steps", t.steps);
    r.readInt64("seed", t.seed);
    r.readInt("eval_interval", t.evalInterval);
    r.readInt("eval_batches", t.evalBatches);
    r.readOptionalDouble("target_loss", t.targetLoss);
    r.readInt("checkpoint_every", t.checkpointEvery);
}

const toml::table* subTable(
    const toml::table& root, std::string_view name, std::optional<Error>& error, std::string_view source)
{
    const toml::node* n = root.get(name);
    if (!n) {
        return nullptr;
    }
    if (!n->is_table()) {
        // Built with append(): GCC 12 warns (-Wrestrict, a false positive) on "[" + std::string(...).
        std::string message = "[";
        message.append(name).append("] must be a table, got ").append(typeName(n->type()));
        error = makeError(ErrorCode::ParseError, std::move(message), where(source, n->source()));
        return nullptr;
    }
    return n->as_table();
}

const std::vector<std::string_view> kTables = {
    "model", "pipeline", "schedule", "optimizer", "data", "training", "device", "profiling"};

Result<RunConfig> fromTable(const toml::table& root, std::string_view source)
{
    for (const auto& [k, node] : root) {
        if (std::find(kTables.begin(), kTables.end(), k.str()) == kTables.end()) {
            return makeError(ErrorCode::ParseError,
                "unknown table or key '" + std::string(k.str())
                    + "' at top level; allowed tables: model, pipeline, schedule, optimizer, data, "
                      "training, device, profiling",
                where(source, k.source()));
        }
    }
    RunConfig c;
    std::optional<Error> error;
    auto reader = [&](std::string_view name) {
        return TableReader(subTable(root, name, error, source), std::string(name), source);
    };
    TableReader model = reader("model");
    TableReader pipeline = reader("pipeline");
    TableReader schedule = reader("schedule");
    TableReader optimizer = reader("optimizer");
    TableReader data = reader("data");
    TableReader training = reader("training");
    TableReader device = reader("device");
    TableReader profiling = reader("profiling");
    if (error) {
        return *error;
    }
    if (auto e = readModel(model, c.model, source)) {
        return *e;
    }
    readPipeline(pipeline, c.pipeline);
    schedule.readString("name", c.schedule.name);
    readOptimizer(optimizer, c.optimizer);
    data.readString("spec", c.data.spec);
    data.readDouble("val_fraction", c.data.valFraction);
    data.readInt64("seed", c.data.seed);
    readTraining(training, c.training);
    device.readString("name", c.device.name);
    device.readInt("intra_op_threads", c.device.intraOpThreads);
    profiling.readBool("trace", c.profiling.trace);
    profiling.readBool("cupti", c.profiling.cupti);
    for (TableReader* r : {&pipeline, &schedule, &optimizer, &data, &training, &device, &profiling}) {
        if (auto e = r->finish()) {
            return *e;
        }
    }
    return c;
}

} // namespace

Result<RunConfig> parseRunConfig(std::string_view toml, std::string_view sourceName)
{
    try {
        const toml::table root = toml::parse(toml, sourceName);
        return fromTable(root, sourceName);
    } catch (const toml::parse_error& e) {
        return makeError(
            ErrorCode::ParseError, "TOML syntax error: " + std::string(e.description()), where(sourceName, e.source()));
    }
}

Result<RunConfig> loadRunConfig(const std::filesystem::path& path)
{
    Result<std::string> text = readBoundedFile(path, kMaxConfigFileBytes, "config file");
    if (!text) {
        return text.error();
    }
    return parseRunConfig(*text, path.string());
}

} // namespace bs::runtime
