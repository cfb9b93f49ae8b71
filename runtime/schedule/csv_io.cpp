#include "runtime/schedule/csv_io.h"

#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "runtime/schedule/catalogue.h"
#include "runtime/schedule/validate.h"

#include <algorithm>
#include <sstream>

namespace bs::runtime {

std::string scheduleToCsv(const Schedule& schedule)
{
    std::string out;
    for (const auto& program : schedule.programs) {
        for (std::size_t i = 0; i < program.size(); ++i) {
            if (i > 0) {
                out += ',';
            }
            out += toString(program[i]);
        }
        out += '\n';
    }
    return out;
}

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

// Bounds a schedule must respect: the catalogue's when the name is known and the shape matches,
// otherwise what the file itself reaches (an imported schedule states no bound of its own).
void fillBounds(Schedule& schedule)
{
    const int p = schedule.stages();
    ScheduleParams params = schedule.params;
    params.stages = p;
    if (const ScheduleInfo* info = findSchedule(params.name); info && !info->takesAccumWindow()) {
        params.accum = 0; // other schedules derive their update window themselves
    }
    if (isKnownSchedule(params.name)) {
        if (auto reference = makeSchedule(params)) {
            schedule.weights = reference->weights;
            schedule.splitBackward = reference->splitBackward;
            schedule.asynchronous = reference->asynchronous;
            schedule.inflightBound = reference->inflightBound;
            schedule.weightVersionBound = reference->weightVersionBound;
            return;
        }
    }
    schedule.inflightBound.assign(static_cast<std::size_t>(p), schedule.totalMicrobatches());
    schedule.weightVersionBound.assign(static_cast<std::size_t>(p), 1);
}

} // namespace

Result<Schedule> scheduleFromCsv(const std::string& text, const ScheduleParams& params)
{
    Schedule schedule;
    schedule.params = params;
    std::istringstream in(text);
    std::string line;
    int lineNo = 0;
    int maxMb = -1;
    while (std::getline(in, line)) {
        ++lineNo;
        if (trim(line).empty()) {
            continue;
        }
        const int stage = static_cast<int>(schedule.programs.size());
        std::vector<Action> program;
        std::string_view rest(line);
        int cellNo = 0;
        while (true) {
            ++cellNo;
            const auto comma = rest.find(',');
            const std::string_view cell = trim(rest.substr(0, comma));
            if (!cell.empty()) {
                auto action = parseAction(cell);
                if (!action) {
                    return makeError(ErrorCode::ParseError, action.error().message,
                                     "line " + std::to_string(lineNo) + ", cell " + std::to_string(cellNo));
                }
                if (action->stage != stage) {
                    return makeError(ErrorCode::ParseError,
                                     "action " + std::string(cell) + " names stage " + std::to_string(action->stage)
                                         + " but sits on the line of stage " + std::to_string(stage),
                                     "line " + std::to_string(lineNo) + ", cell " + std::to_string(cellNo));
                }
                maxMb = std::max(maxMb, action->kind == ActionKind::Update ? action->lastMb : action->microbatch);
                program.push_back(*action);
            }
            if (comma == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(comma + 1);
        }
        schedule.programs.push_back(std::move(program));
    }
    if (schedule.programs.empty()) {
        return makeError(ErrorCode::ParseError, "schedule CSV has no lines", "expected one line of actions per stage");
    }
    // The file decides how much work there is; params decide how it groups into batches.
    schedule.params.stages = schedule.stages();
    const int m = std::max(1, params.microbatches);
    schedule.params.microbatches = m;
    schedule.params.batches = std::max(1, (maxMb + m) / m);
    if (schedule.params.batches * m != maxMb + 1) {
        return makeError(ErrorCode::InvalidArgument,
                         "the file has " + std::to_string(maxMb + 1) + " micro-batches, not a multiple of microbatches = "
                             + std::to_string(m),
                         "set --microbatches to the schedule's micro-batches per global batch");
    }
    // PyTorch's CSVs have no update cells: add one per global batch after the stage's last backward of it.
    const bool hasUpdates = std::any_of(schedule.programs.begin(), schedule.programs.end(), [](const auto& program) {
        return std::any_of(program.begin(), program.end(), [](const Action& a) { return a.kind == ActionKind::Update; });
    });
    fillBounds(schedule);
    if (!hasUpdates) {
        for (int s = 0; s < schedule.stages(); ++s) {
            auto& program = schedule.programs[static_cast<std::size_t>(s)];
            std::vector<Action> withUpdates;
            std::vector<int> remaining(static_cast<std::size_t>(schedule.params.batches), m);
            for (const Action& a : program) {
                withUpdates.push_back(a);
                if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight) {
                    const int n = a.microbatch / m;
                    if (--remaining[static_cast<std::size_t>(n)] == 0) {
                        withUpdates.push_back(update(s, n, n * m, n * m + m - 1));
                    }
                }
            }
            program = std::move(withUpdates);
        }
    }
    if (auto status = validate(schedule); !status) {
        return status.error();
    }
    return schedule;
}

Status writeScheduleCsv(const Schedule& schedule, const std::string& path)
{
    return writeFileAtomic(path, scheduleToCsv(schedule));
}

Result<Schedule> readScheduleCsv(const std::string& path, const ScheduleParams& params)
{
    Result<std::string> text = readBoundedFile(path, kMaxScheduleCsvBytes, "schedule CSV");
    if (!text) {
        return text.error();
    }
    auto schedule = scheduleFromCsv(*text, params);
    if (!schedule) {
        Error e = schedule.error();
        e.message += " (schedule CSV '" + path + "')";
        e.context = path + ": " + e.context;
        return e;
    }
    return schedule;
}

} // namespace bs::runtime
