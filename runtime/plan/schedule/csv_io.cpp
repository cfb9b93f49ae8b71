#include "runtime/plan/schedule/csv_io.h"

#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/limits.h"
#include "runtime/plan/schedule/validate.h"

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
    const int p = schedule.ranks();
    ScheduleParams params = schedule.params;
    params.stages = p;
    params.stagesPerRank = schedule.stagesPerRank();
    params.placement = schedule.placement;
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
            schedule.activationBound = reference->activationBound;
            return;
        }
    }
    schedule.inflightBound.assign(static_cast<std::size_t>(p), schedule.totalMicrobatches() * schedule.stagesPerRank());
    schedule.weightVersionBound.assign(static_cast<std::size_t>(p), 1);
}

// Which rank holds each stage, from the lines the stages' actions sit on. One stage per line must
// be stage r on line r (the classic CSV); several must form PyTorch's loop or V placement.
Status inferPlacement(Schedule& schedule, const std::vector<int>& lineOfStage)
{
    const int ranks = schedule.ranks();
    const int stages = static_cast<int>(lineOfStage.size());
    for (int stage = 0; stage < stages; ++stage) {
        if (lineOfStage[static_cast<std::size_t>(stage)] < 0) {
            return makeError(ErrorCode::ParseError, "stage " + std::to_string(stage) + " has no actions",
                "every stage 0.." + std::to_string(stages - 1) + " needs its actions on one line");
        }
    }
    if (stages == ranks) {
        for (int stage = 0; stage < stages; ++stage) {
            const int line = lineOfStage[static_cast<std::size_t>(stage)];
            if (line != stage) {
                return makeError(ErrorCode::ParseError,
                    "actions of stage " + std::to_string(stage) + " sit on the line of stage " + std::to_string(line),
                    "line " + std::to_string(line + 1) + ": one stage per line, stage r on line r");
            }
        }
        schedule.placement = Placement::OnePerRank;
        return ok();
    }
    if (stages % ranks != 0) {
        return makeError(ErrorCode::ParseError,
            std::to_string(stages) + " stages on " + std::to_string(ranks) + " lines (ranks)",
            "the same number of stages on every rank");
    }
    // Where both fit (one rank), the named schedule's own placement wins.
    const ScheduleInfo* info = findSchedule(schedule.params.name);
    const Placement own = info && info->multiStage() ? info->placement : Placement::Loop;
    for (Placement placement : {own, Placement::Loop, Placement::V}) {
        if (rankOfStageFor(placement, ranks, stages / ranks) == lineOfStage) {
            schedule.placement = placement;
            schedule.rankOfStage = lineOfStage;
            return ok();
        }
    }
    return makeError(ErrorCode::ParseError, "the stages' lines form neither a loop nor a V placement",
        "loop: stage i on line i mod p; v: line r holds stages r and 2p-1-r");
}

// PyTorch's "compute_comms" CSV also lists its runtime's bookkeeping: 2SEND_F3, 1RECV_B0,
// 0UNSHARD, 0RESHARD, 0REDUCE_GRAD. Sends and receives are implied by data dependencies here
// (and their order is checked by the validator), so such cells are read and skipped.
bool isTorchCommCell(std::string_view cell)
{
    std::size_t digits = 0;
    while (digits < cell.size() && cell[digits] >= '0' && cell[digits] <= '9') {
        ++digits;
    }
    if (digits == 0) {
        return false;
    }
    std::string_view rest = cell.substr(digits);
    for (std::string_view bare : {"UNSHARD", "RESHARD", "REDUCE_GRAD"}) {
        if (rest == bare) {
            return true;
        }
    }
    for (std::string_view comm : {"SEND_F", "RECV_F", "SEND_B", "RECV_B"}) {
        if (rest.substr(0, comm.size()) == comm && rest.size() > comm.size()) {
            std::string_view mb = rest.substr(comm.size());
            return std::all_of(mb.begin(), mb.end(), [](char c) { return c >= '0' && c <= '9'; });
        }
    }
    return false;
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
    std::vector<int> lineOfStage; // stage -> the line (rank) its actions sit on
    while (std::getline(in, line)) {
        ++lineNo;
        if (trim(line).empty()) {
            continue;
        }
        const int rankLine = static_cast<int>(schedule.programs.size());
        std::vector<Action> program;
        std::string_view rest(line);
        int cellNo = 0;
        while (true) {
            ++cellNo;
            const auto comma = rest.find(',');
            const std::string_view cell = trim(rest.substr(0, comma));
            if (!cell.empty() && !isTorchCommCell(cell)) {
                auto action = parseAction(cell);
                if (!action) {
                    return makeError(ErrorCode::ParseError, action.error().message,
                        "line " + std::to_string(lineNo) + ", cell " + std::to_string(cellNo));
                }
                Status placed = ok();
                forEachPart(*action, [&](const Action& part) {
                    if (!placed) {
                        return;
                    }
                    if (part.stage > limits::kMaxStages * kMaxStagesPerRank) {
                        placed = makeError(ErrorCode::ParseError,
                            "action " + std::string(cell) + " names stage " + std::to_string(part.stage),
                            "line " + std::to_string(lineNo) + ", cell " + std::to_string(cellNo)
                                + ": allowed stages 0.." + std::to_string(limits::kMaxStages * kMaxStagesPerRank));
                        return;
                    }
                    const auto stage = static_cast<std::size_t>(part.stage);
                    if (lineOfStage.size() <= stage) {
                        lineOfStage.resize(stage + 1, -1);
                    }
                    if (lineOfStage[stage] >= 0 && lineOfStage[stage] != rankLine) {
                        placed = makeError(ErrorCode::ParseError,
                            "action " + std::string(cell) + " names stage " + std::to_string(part.stage)
                                + " but sits on line " + std::to_string(rankLine + 1)
                                + "; the stage's other actions are on line " + std::to_string(lineOfStage[stage] + 1),
                            "line " + std::to_string(lineNo) + ", cell " + std::to_string(cellNo)
                                + ": a stage's actions all sit on its rank's line");
                        return;
                    }
                    lineOfStage[stage] = rankLine;
                    maxMb = std::max(maxMb, part.kind == ActionKind::Update ? part.lastMb : part.microbatch);
                });
                if (!placed) {
                    return placed.error();
                }
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
    // Every micro-batch needs a forward on every stage, so ids past the shortest line's length are
    // an error, found here before anything is sized by them (fuzzing: "0F666156615" made the
    // validator allocate 2.6 GB of per-micro-batch state).
    std::size_t shortest = schedule.programs.front().size();
    for (const auto& program : schedule.programs) {
        shortest = std::min(shortest, program.size());
    }
    if (maxMb >= 0 && static_cast<std::size_t>(maxMb) >= shortest) {
        return makeError(ErrorCode::ParseError,
            "micro-batch " + std::to_string(maxMb) + " cannot be scheduled: the shortest stage line has "
                + std::to_string(shortest) + " actions and each micro-batch needs a forward on every stage",
            "allowed: micro-batch ids 0.." + std::to_string(shortest == 0 ? 0 : shortest - 1));
    }
    if (Status placed = inferPlacement(schedule, lineOfStage); !placed) {
        return placed.error();
    }
    // The file decides how much work there is; params decide how it groups into batches.
    schedule.params.stages = schedule.ranks();
    schedule.params.stagesPerRank = schedule.stagesPerRank();
    schedule.params.placement = schedule.placement;
    const int m = std::max(1, params.microbatches);
    schedule.params.microbatches = m;
    schedule.params.batches = std::max(1, (maxMb + m) / m);
    if (schedule.params.batches * m != maxMb + 1) {
        return makeError(ErrorCode::InvalidArgument,
            "the file has " + std::to_string(maxMb + 1)
                + " micro-batches, not a multiple of microbatches = " + std::to_string(m),
            "set --microbatches to the schedule's micro-batches per global batch");
    }
    // PyTorch's CSVs have no update cells: add one per global batch after the stage's last backward of it.
    const bool hasUpdates = std::any_of(schedule.programs.begin(), schedule.programs.end(), [](const auto& program) {
        return std::any_of(
            program.begin(), program.end(), [](const Action& a) { return a.kind == ActionKind::Update; });
    });
    fillBounds(schedule);
    if (!hasUpdates) {
        const auto batches = static_cast<std::size_t>(schedule.params.batches);
        std::vector<int> remaining(static_cast<std::size_t>(schedule.stages()) * batches, m); // [stage][batch]
        for (auto& program : schedule.programs) {
            std::vector<Action> withUpdates;
            for (const Action& action : program) {
                withUpdates.push_back(action);
                forEachPart(action, [&](const Action& a) {
                    if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight) {
                        const int n = a.microbatch / m;
                        if (--remaining[static_cast<std::size_t>(a.stage) * batches + static_cast<std::size_t>(n)]
                            == 0) {
                            withUpdates.push_back(update(a.stage, n, n * m, n * m + m - 1));
                        }
                    }
                });
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
