// state.json of a run's checkpoint (checkpoint_state.h): written with nlohmann, read back with
// every field checked for presence, type and range.
#include "runtime/plan/rundir/checkpoint_state.h"

#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <regex>
#include <system_error>

namespace bs::runtime {

namespace fs = std::filesystem;
using nlohmann::json;

std::string stageCheckpointFileName(int stage, int step)
{
    return "stage" + std::to_string(stage) + "-step" + std::to_string(step) + ".pt";
}

std::string rngCheckpointFileName(int step)
{
    return "rng-step" + std::to_string(step) + ".pt";
}

namespace {

json number(double v)
{
    return std::isfinite(v) ? json(v) : json(nullptr); // JSON has no NaN: a rank's unknown loss
}

json doubles(const std::vector<double>& v)
{
    json out = json::array();
    for (double x : v) {
        out.push_back(number(x));
    }
    return out;
}

// Reads fields of one JSON object; the first problem wins and names its field.
class Fields
{
public:
    Fields(const json& object, std::string source)
        : m_object(object)
        , m_source(std::move(source))
    {}

    const std::optional<Error>& error() const { return m_error; }

    const json* get(const std::string& key)
    {
        if (m_error) {
            return nullptr;
        }
        auto it = m_object.find(key);
        if (it == m_object.end()) {
            fail(key, "is missing");
            return nullptr;
        }
        return &*it;
    }

    void fail(const std::string& key, const std::string& what)
    {
        if (!m_error) {
            m_error = makeError(ErrorCode::ParseError, "checkpoint field '" + key + "' " + what, m_source + ": " + key);
        }
    }

    template<typename T>
    void integer(
        const std::string& key, T& out, std::int64_t lo, std::int64_t hi = std::numeric_limits<std::int64_t>::max())
    {
        const json* v = get(key);
        if (!v) {
            return;
        }
        if (!v->is_number_integer()) {
            fail(key, "must be an integer");
            return;
        }
        const std::int64_t x = v->get<std::int64_t>();
        if (x < lo || x > hi) {
            fail(key,
                "= " + std::to_string(x) + " is out of range; allowed: " + std::to_string(lo) + ".."
                    + std::to_string(hi));
            return;
        }
        out = static_cast<T>(x);
    }

    void real(const std::string& key, double& out, double lo)
    {
        const json* v = get(key);
        if (!v) {
            return;
        }
        if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo) {
            fail(key, "must be a finite number >= " + std::to_string(lo));
            return;
        }
        out = v->get<double>();
    }

    void text(const std::string& key, std::string& out)
    {
        const json* v = get(key);
        if (v && !v->is_string()) {
            fail(key, "must be a string");
        } else if (v) {
            out = v->get<std::string>();
        }
    }

    void reals(const std::string& key, std::vector<double>& out)
    {
        const json* v = get(key);
        if (!v) {
            return;
        }
        if (!v->is_array()) {
            fail(key, "must be an array of numbers");
            return;
        }
        for (const json& x : *v) {
            if (x.is_null()) {
                out.push_back(std::numeric_limits<double>::quiet_NaN());
            } else if (x.is_number()) {
                out.push_back(x.get<double>());
            } else {
                fail(key, "must be an array of numbers (null for an unknown value)");
                return;
            }
        }
    }

    template<typename T>
    void integers(const std::string& key, std::vector<T>& out, std::int64_t lo)
    {
        const json* v = get(key);
        if (!v) {
            return;
        }
        if (!v->is_array()) {
            fail(key, "must be an array of integers");
            return;
        }
        for (const json& x : *v) {
            if (!x.is_number_integer() || x.get<std::int64_t>() < lo
                || x.get<std::int64_t>() > std::numeric_limits<int>::max()) {
                fail(key, "must be an array of integers >= " + std::to_string(lo));
                return;
            }
            out.push_back(static_cast<T>(x.get<std::int64_t>()));
        }
    }

    void config(const std::string& key, RunConfig& out)
    {
        std::string toml;
        text(key, toml);
        if (m_error) {
            return;
        }
        auto parsed = parseRunConfig(toml, m_source + ": " + key);
        if (!parsed) {
            fail(key, "does not parse: " + parsed.error().message);
            return;
        }
        if (Status valid = validate(*parsed); !valid) {
            fail(key, "is not a valid configuration: " + valid.error().message);
            return;
        }
        out = *parsed;
    }

private:
    const json& m_object;
    std::string m_source;
    std::optional<Error> m_error;
};

} // namespace

Status writeCheckpointState(const fs::path& checkpointDir, const CheckpointState& s)
{
    json changes = json::array();
    for (const CheckpointChange& c : s.changes) {
        changes.push_back({{"step", c.step}, {"first_microbatch", c.firstMicrobatch}, {"time_ns", c.time},
            {"label", c.label}, {"config", toToml(c.config)}});
    }
    json j = {
        {"format", s.format},
        {"step", s.step},
        {"microbatches_done", s.microbatchesDone},
        {"cursor_first_microbatch", s.cursorFirstMicrobatch},
        {"cursor_first_sequence", s.cursorFirstSequence},
        {"cursor_batch_size", s.cursorBatchSize},
        {"virtual_time_ns", s.virtualTime},
        {"versions", s.versions},
        {"updates_offset", s.updatesOffset},
        {"tokens_before", s.tokensBefore},
        {"settings_step", s.settingsStep},
        {"train_wall_s", s.trainWallS},
        {"eval_wall_s", s.evalWallS},
        {"busy_ns", s.busy},
        {"config", toToml(s.config)},
        {"initial_config", toToml(s.initialConfig)},
        {"changes", changes},
        {"losses", doubles(s.losses)},
        {"val_losses", doubles(s.valLosses)},
        {"val_steps", s.valSteps},
        {"val_virtual_times_s", doubles(s.valVirtualTimesS)},
        {"time_to_target_s", s.timeToTargetS ? json(*s.timeToTargetS) : json(nullptr)},
        {"step_to_target", s.stepToTarget ? json(*s.stepToTarget) : json(nullptr)},
    };
    std::error_code ec;
    fs::create_directories(checkpointDir, ec);
    if (ec) {
        return makeError(
            ErrorCode::IoError, "cannot create the checkpoint directory: " + ec.message(), checkpointDir.string());
    }
    return writeFileAtomic(checkpointDir / kCheckpointStateFileName, j.dump(1) + "\n");
}

Result<CheckpointState> parseCheckpointState(std::string_view text, std::string_view sourceName)
{
    const std::string source(sourceName);
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        return makeError(ErrorCode::ParseError, "the checkpoint state is not a JSON object", source);
    }
    CheckpointState s;
    Fields f(j, source);
    f.integer("format", s.format, kCheckpointFormat, kCheckpointFormat);
    f.integer("step", s.step, 0, std::numeric_limits<int>::max());
    f.integer("microbatches_done", s.microbatchesDone, 0);
    f.integer("cursor_first_microbatch", s.cursorFirstMicrobatch, 0);
    f.integer("cursor_first_sequence", s.cursorFirstSequence, 0);
    f.integer("cursor_batch_size", s.cursorBatchSize, 1, std::numeric_limits<int>::max());
    f.integer("virtual_time_ns", s.virtualTime, 0);
    f.integers("versions", s.versions, 0);
    f.integer("updates_offset", s.updatesOffset, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    f.real("tokens_before", s.tokensBefore, 0.0);
    f.integer("settings_step", s.settingsStep, 0, std::numeric_limits<int>::max());
    f.real("train_wall_s", s.trainWallS, 0.0);
    f.real("eval_wall_s", s.evalWallS, 0.0);
    f.integer("busy_ns", s.busy, 0);
    f.config("config", s.config);
    f.config("initial_config", s.initialConfig);
    if (const json* changes = f.get("changes"); changes && !changes->is_array()) {
        f.fail("changes", "must be an array of objects");
    } else if (changes) {
        for (const json& c : *changes) {
            if (!c.is_object()) {
                f.fail("changes", "must be an array of objects");
                break;
            }
            CheckpointChange ch;
            Fields cf(c, source + ": changes[" + std::to_string(s.changes.size()) + "]");
            cf.integer("step", ch.step, 0, std::numeric_limits<int>::max());
            cf.integer("first_microbatch", ch.firstMicrobatch, 0);
            cf.integer("time_ns", ch.time, 0);
            cf.text("label", ch.label);
            cf.config("config", ch.config);
            if (cf.error()) {
                return *cf.error();
            }
            s.changes.push_back(std::move(ch));
        }
    }
    f.reals("losses", s.losses);
    f.reals("val_losses", s.valLosses);
    f.integers("val_steps", s.valSteps, 0);
    f.reals("val_virtual_times_s", s.valVirtualTimesS);
    if (const json* t = f.get("time_to_target_s"); t && !t->is_null()) {
        if (!t->is_number() || !std::isfinite(t->get<double>()) || t->get<double>() < 0) {
            f.fail("time_to_target_s", "must be null or a finite number >= 0");
        } else {
            s.timeToTargetS = t->get<double>();
        }
    }
    if (const json* t = f.get("step_to_target"); t && !t->is_null()) {
        if (!t->is_number_integer() || t->get<std::int64_t>() < 0
            || t->get<std::int64_t>() > std::numeric_limits<int>::max()) {
            f.fail("step_to_target", "must be null or an integer >= 0");
        } else {
            s.stepToTarget = static_cast<int>(t->get<std::int64_t>());
        }
    }
    if (f.error()) {
        return *f.error();
    }
    // Cross-field consistency: what the resumed run indexes with these must agree.
    if (static_cast<int>(s.versions.size()) != s.config.pipeline.stages) {
        return makeError(ErrorCode::ParseError,
            "checkpoint field 'versions' has " + std::to_string(s.versions.size()) + " entries for "
                + std::to_string(s.config.pipeline.stages) + " stages",
            source + ": versions");
    }
    if (static_cast<int>(s.losses.size()) != s.step) {
        return makeError(ErrorCode::ParseError,
            "checkpoint field 'losses' has " + std::to_string(s.losses.size()) + " entries for step "
                + std::to_string(s.step),
            source + ": losses");
    }
    if (s.valSteps.size() != s.valLosses.size() || s.valVirtualTimesS.size() != s.valLosses.size()) {
        return makeError(ErrorCode::ParseError,
            "checkpoint fields 'val_losses', 'val_steps' and 'val_virtual_times_s' differ in length",
            source + ": val_steps");
    }
    if (s.settingsStep > s.step || s.cursorFirstMicrobatch > s.microbatchesDone) {
        return makeError(ErrorCode::ParseError,
            "checkpoint field 'settings_step' or 'cursor_first_microbatch' lies beyond the checkpoint",
            source + ": settings_step");
    }
    return s;
}

Result<CheckpointState> readCheckpointState(const fs::path& checkpointDir)
{
    const fs::path file = checkpointDir / kCheckpointStateFileName;
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        return makeError(ErrorCode::IoError,
            "no checkpoint: " + file.string() + " does not exist (train with --checkpoint-every N)", file.string());
    }
    auto text = readBoundedFile(file, kMaxCheckpointStateBytes, "checkpoint state");
    if (!text) {
        return text.error();
    }
    return parseCheckpointState(*text, file.string());
}

void removeOtherCheckpointFiles(const fs::path& checkpointDir, int keepStep)
{
    static const std::regex archive(R"((stage\d+|rng)-step(\d+)\.pt)");
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(checkpointDir, ec)) {
        std::smatch match;
        const std::string name = e.path().filename().string();
        if (std::regex_match(name, match, archive) && match[2].str() != std::to_string(keepStep)) {
            fs::remove(e.path(), ec);
        }
    }
}

} // namespace bs::runtime
